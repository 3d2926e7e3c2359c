import { z } from 'zod';
import { QUEUE_STATUSES } from '../../src/review/cards/card-shape.js';
import { NOT_BLANK, queryInt, utf8Bound, when } from '../schemas.js';

/**
 * At most `n` UTF-8 bytes. JSON Schema counts characters, never bytes: /openapi.json says `maxLength: n / 4`
 * (a character is at most 4 bytes, so nothing the description allows is refused) and states the exact
 * rule as `x-max-utf8-bytes` (docs/decisions/api-edge.md).
 */
const maxBytes = (n: number, shown: string) =>
  z
    .string()
    .refine((s) => Buffer.byteLength(s, 'utf8') <= n, `must be at most ${shown} UTF-8 bytes`)
    .meta({ ...utf8Bound(n), description: `At most ${shown} UTF-8 bytes` });

export const ReviewListQuery = z.object({
  status: z.enum(QUEUE_STATUSES).optional(),
  limit: queryInt(1, 100, 50),
});

const Json = z.record(z.string(), z.unknown());

export const ReviewCard = z
  .object({
    id: z.string(),
    kind: z.string(),
    sourceType: z.string(),
    status: z.string(),
    title: z.string(),
    prompt: z.string(),
    summary: z.string(),
    detail: Json.nullable(),
    priority: z.string(),
    options: z.array(z.object({ value: z.string(), label: z.string() })).nullable(),
    textInput: Json.nullable(),
    budgetChange: Json.nullable(),
    payload: Json,
    actions: z.array(z.string()),
    primaryLabel: z.string(),
    autoResolveAt: z.number().int().nullable(),
    dueAt: z.number().int().nullable(),
    snoozedUntil: z.number().int().nullable(),
    leadId: z.string().nullable(),
    leadContactId: z.string().nullable(),
    postId: z.string().nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
    resolvedAt: z.number().int().nullable(),
    resolution: Json.nullable(),
  })
  .meta({ id: 'ReviewCard' });

export const ReviewListResponse = z.object({ items: z.array(ReviewCard) });
export const ReviewItemResponse = z.object({ item: ReviewCard });

export const AnswerBody = z
  .object({
    action: z.enum(['approve', 'answer', 'choose']),
    text: maxBytes(8_000, '8,000').optional(),
    // Checked against the card's options by the service (400 unless exactly one of them).
    optionValues: z
      .array(z.string())
      .meta({ minItems: 1, maxItems: 1, description: "For choose: exactly one of the card's option values" })
      .optional(),
  })
  .refine((b) => b.action !== 'answer' || Boolean(b.text?.trim()), { message: 'is required when action is answer', path: ['text'] })
  .refine((b) => b.action === 'choose' || b.optionValues === undefined, { message: 'is only for action choose', path: ['optionValues'] })
  .meta({
    allOf: [
      when({ properties: { action: { const: 'answer' } } }, { required: ['text'], properties: { text: NOT_BLANK } }),
      when({ properties: { action: { enum: ['approve', 'answer'] } } }, { not: { required: ['optionValues'] } }),
    ],
  });
export const AnswerResponse = z.object({ ok: z.literal(true), kind: z.string(), result: Json.optional() });

export const SendBody = z
  .object({
    body: z
      .string()
      .min(1)
      .refine((s) => s.trim().length > 0, 'must not be empty')
      .pipe(maxBytes(8_192, '8,192'))
      .meta({
        ...utf8Bound(8_192),
        ...NOT_BLANK,
        description: 'Sent instead of the draft; mail replies only; not empty or only whitespace; up to 8,192 UTF-8 bytes',
      })
      .optional(),
  })
  .optional()
  .transform((b) => b ?? {});
export const SendResponse = z.object({
  ok: z.literal(true),
  sendId: z.string(),
  status: z.literal('sent'),
  to: z.string(),
  providerId: z.string().nullable(),
  decidedBy: z.string(),
});
export const RequestChangesBody = z.object({
  text: z
    .string()
    .min(1)
    .refine((s) => s.trim().length > 0, 'must not be empty')
    .pipe(maxBytes(8_000, '8,000'))
    .meta({ ...utf8Bound(8_000), ...NOT_BLANK, description: 'Not empty or only whitespace; at most 8,000 UTF-8 bytes' }),
});
export const OkResponse = z.object({ ok: z.literal(true) });

export const SnoozeBody = z.object({ until: z.number().int() });
export const SnoozeResponse = z.object({ ok: z.literal(true), status: z.literal('snoozed'), snoozedUntil: z.number().int() });

export const DismissBody = z
  .object({
    reason: z
      .string()
      .refine((s) => [...s].length <= 2_000, 'must be at most 2,000 characters')
      .meta({ maxLength: 2_000 })
      .optional(),
  })
  .optional()
  .transform((b) => b ?? {});
export const DismissResponse = z.object({
  ok: z.literal(true),
  status: z.literal('dismissed'),
  proposal: z.literal('cancelled').optional(),
});
