import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Returns a revised card to `pending` once its revision turn has finished. Fails (and retries on a fixed
 * backoff) while the turn is still running; a card already returned is a no-op.
 */
export const cardRevisionReturn = defineJob({
  queue: 'card-timers',
  name: 'card.revision-return',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), turnId: z.string().min(1) }),
  options: {
    attempts: 120,
    backoff: { type: 'fixed', delay: 5_000 },
  },
  description: 'Puts a revised card back in the queue when its revision turn is done; already returned is a no-op.',
  // One return per revision of the card: the version the request made, which the payload does not carry.
  jobId: (p, r: { version: number }) => `card-revision-return-${p.cardId}-v${r.version}`,
});
