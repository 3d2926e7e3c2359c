import { z } from 'zod';
import { defineJob } from './registry.js';

/** Returns a snoozed card to the queue at `until`; a card re-snoozed to another time is left alone. */
export const cardWake = defineJob({
  queue: 'card-timers',
  name: 'card.wake',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), until: z.number().int() }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: 'Brings a snoozed card back to pending at its snoozedUntil; a changed snooze makes it a no-op.',
  jobId: (p) => `card-wake-${p.cardId}-${p.until}`,
});
