import { z } from 'zod';

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

/**
 * Documents the body; the handler reads it by the spec's rules itself, because a 400 or 409 can carry
 * `notSent` (when `interrupt` is false and an earlier message is unfinished).
 */
export const PostMessageBody = z
  .record(z.string(), z.unknown())
  .meta({
    id: 'AgentMessageRequest',
    description:
      'Fields: text (string, required, up to 4,000 characters and 8,000 UTF-8 bytes), clientRequestId (up to 128 of A-Za-z0-9_.:-), ' +
      'waitSeconds (integer 0 to 120), interrupt (boolean, default true), queue (boolean, default false; not with interrupt).',
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
    }),
  })
  .meta({ id: 'AgentStatus' });
