import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';

/**
 * Hands one accepted webhook delivery to its account's agent as an event turn. The delivery row links
 * the turn it got (a conditional update under the row's lock), so a repeat finds it handed and only
 * re-asks for the drain.
 */
export const webhookEvent = defineJob({
  queue: 'webhook-events',
  name: 'webhook.event',
  payload: z.object({ deliveryId: z.string().min(1) }),
  options: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 1_000, jitter: 0.2 },
  },
  description: 'Hands an accepted webhook delivery to the agent as an event; the delivery row links its turn, so a repeat is harmless.',
  jobId: (p) => `whk-${p.deliveryId}`,
});

/** The webhook-events queue: accepted deliveries on their way to the agent (workers/webhook-events.ts). */
export const webhookEventsQueue = defineQueue('webhook-events', { webhookEvent });
