import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Resolves a card the trust ladder scheduled, at its `autoResolveAt`. The processor updates the card
 * only while it is still pending with that same deadline, so a person acting first, a snooze or a
 * re-schedule turns this job into a no-op.
 */
export const cardAutoResolve = defineJob({
  queue: 'card-timers',
  name: 'card.auto-resolve',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), at: z.number().int() }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: 'Auto-resolves a trusted card at its deadline; a stale deadline or a card someone already acted on is a no-op.',
  jobId: (p) => `card-auto-${p.cardId}-${p.at}`,
});
