import { z } from 'zod';
import {
  CLIENT_REQUEST_ID_CHARS,
  CLIENT_REQUEST_ID_MAX,
  TEXT_MAX_BYTES,
  TEXT_MAX_CHARS,
  WAIT_MAX_SECONDS,
} from '../../src/agent/messages/message-request.js';
import { NOT_BLANK, REFUSAL, utf8Bound, when } from '../schemas.js';

export const Bubble = z.object({ text: z.string(), at: z.number().int() });

export const AgentMessage = z
  .object({
    requestId: z.string(),
    status: z.enum(['queued', 'running', 'replied', 'failed']),
    text: z.string(),
    sentAt: z.number().int(),
    replies: z.array(Bubble).describe('The latest five bubbles, oldest first'),
    failure: z.string().optional(),
    interrupted: z.boolean(),
  })
  .meta({ id: 'AgentMessage' });

const waitRule = `must be an integer from 0 to ${WAIT_MAX_SECONDS}`;
const bool = z.boolean({ error: 'must be true or false' });

/**
 * The body, by spec 4.3's rules, in its order: the first problem is the answer. Over 4,000 characters
 * and a disallowed clientRequestId character are 409 `rejected` (REFUSAL); the rest are 400s. Unknown
 * fields are ignored. When `interrupt` is false, either also names the unfinished earlier message.
 */
export const PostMessageBody = z
  .object(
    {
      text: z
        .string({ error: (iss) => (iss.input === undefined || iss.input === null ? 'is required' : 'must be a string') })
        .refine((s) => s.trim() !== '', 'must not be empty')
        .refine((s) => Buffer.byteLength(s, 'utf8') <= TEXT_MAX_BYTES, 'must be at most 8,000 UTF-8 bytes')
        .refine((s) => [...s].length <= TEXT_MAX_CHARS, { message: 'must be at most 4,000 characters', params: REFUSAL })
        .meta({
          // The 400's bounds (docs/decisions/api-edge.md); over 4,000 characters is a 409, not a 400.
          description: 'Required, not only whitespace; over 8,000 UTF-8 bytes is 400, over 4,000 characters is 409',
          minLength: 1,
          ...utf8Bound(TEXT_MAX_BYTES),
          ...NOT_BLANK,
        }),
      clientRequestId: z
        .string({ error: 'must be a string' })
        .min(1, 'must not be empty')
        .max(CLIENT_REQUEST_ID_MAX, `must be at most ${CLIENT_REQUEST_ID_MAX} characters`)
        .refine((s) => CLIENT_REQUEST_ID_CHARS.test(s), { message: 'may contain only letters, digits and _ . : -', params: REFUSAL })
        .meta({
          // No `pattern`: a disallowed character is 409 by spec, and a gateway checking one would answer 400.
          description:
            'Retries with the same id and text answer the first message (deduplicated); characters A-Za-z0-9_.:- only (another is 409)',
        })
        .optional(),
      waitSeconds: z
        .number({ error: waitRule })
        .int(waitRule)
        .min(0, waitRule)
        .max(WAIT_MAX_SECONDS, waitRule)
        .meta({ description: 'Wait up to this long for the reply: 200 when the turn finished in time, else 202' })
        .optional(),
      interrupt: bool
        .meta({ description: 'Default true: stop the running turn. False: send nothing while an earlier message is unfinished' })
        .optional(),
      queue: bool.meta({ description: 'Default false. True: start after current work (not with interrupt)' }).optional(),
    },
    { error: 'must be a JSON object' },
  )
  .refine((b) => !(b.queue === true && b.interrupt !== undefined), { message: 'cannot be combined with interrupt', path: ['queue'] })
  // The same rule for a validating gateway: `queue: true` with any `interrupt` is refused.
  .meta({
    id: 'AgentMessageRequest',
    allOf: [when({ properties: { queue: { const: true } }, required: ['queue'] }, { not: { required: ['interrupt'] } })],
  });

export const PostMessageResponse = z
  .object({
    requestId: z.string(),
    deduplicated: z.boolean(),
    notSent: z.boolean().optional(),
    message: AgentMessage.optional(),
    waitEnded: z.enum(['unauthorized', 'poll_failed']).optional(),
  })
  .meta({ id: 'AgentMessageResponse' });

export const GetMessageResponse = z.object({ message: AgentMessage }).meta({ id: 'AgentMessageEnvelope' });

export const RequestIdParams = z.object({ requestId: z.string().min(1) });

export const ThreadItem = z.object({ role: z.enum(['user', 'agent']), requestId: z.string(), text: z.string(), at: z.number().int() });
export const ThreadResponse = z.object({ items: z.array(ThreadItem) }).meta({ id: 'AgentThread' });

export const StatusResponse = z
  .object({
    status: z.object({
      sandbox: z.string(),
      running: z.boolean(),
      lastActivityAt: z.number().int().nullable(),
      lastTurnAt: z.number().int().nullable(),
      pendingWakes: z.number().int(),
      nextWakeAt: z.number().int().nullable(),
      modelCalls: z
        .object({
          budget: z.number().int().meta({ description: 'language-model calls the account may make per UTC day' }),
          used: z.number().int().meta({ description: 'calls made today' }),
          refused: z.number().int().meta({ description: 'calls refused today because the budget was spent' }),
          exhaustedAt: z
            .number()
            .int()
            .nullable()
            .meta({ description: 'when the budget of today ran out (epoch ms); null while some is left' }),
          resetsAt: z.number().int().meta({ description: 'when the budget of the next UTC day starts (epoch ms)' }),
        })
        .meta({ description: 'the model-call budget of today: once spent, no model is called until resetsAt' }),
    }),
  })
  .meta({ id: 'AgentStatus' });
