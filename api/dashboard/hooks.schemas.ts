import { z } from 'zod';
import { OUTCOME_FILTERS } from '../../src/webhooks/delivery-log.js';
import { queryInt } from '../schemas.js';

// Settings, Webhooks: hooks and their delivery log. The label rule is the hook service's
// (src/webhooks/webhooks.types.ts, HOOK_LABEL), so the body takes a string and the service names the rule.

export const HookItem = z
  .object({
    id: z.string(),
    label: z.string(),
    enabled: z.boolean(),
    createdAt: z.number().int(),
    lastDeliveryAt: z.number().int().nullable(),
  })
  .strict();

export const HooksList = z.object({ items: z.array(HookItem) }).strict();

export const CreateHookBody = z
  .object({ label: z.string().meta({ description: '1 to 32 characters of lowercase letters, digits, - and _' }) })
  .strict();

export const HookWithUrl = z
  .object({ hook: HookItem, url: z.string().meta({ description: 'The secret URL: shown this once, never again' }) })
  .strict();

export const HookReply = z.object({ hook: HookItem }).strict();

export const HookParams = z.object({ id: z.string().min(1) });
export const DeliveryParams = z.object({ id: z.string().min(1), deliveryId: z.string().min(1) });

export const DeliveriesQuery = z.object({
  outcome: z.enum(OUTCOME_FILTERS).optional(),
  cursor: z.string().optional(),
  limit: queryInt(1, 100, 50),
});

export const DeliveriesPage = z
  .object({
    items: z.array(
      z
        .object({
          id: z.string(),
          outcome: z.enum(OUTCOME_FILTERS),
          receivedAt: z.number().int(),
          sizeBytes: z.number().int(),
          preview: z.string().nullable().meta({ description: "The body's first 500 characters; null when it was not kept (rate limited)" }),
          replayOf: z.string().nullable(),
          count: z.number().int().meta({ description: 'Deliveries the entry stands for (a minute of refusals shares one entry)' }),
          lastAt: z.number().int().nullable(),
          error: z.string().nullable(),
        })
        .strict(),
    ),
    nextCursor: z.string().nullable(),
  })
  .strict();

export const Replayed = z.object({ deliveryId: z.string(), replayOf: z.string() }).strict();
