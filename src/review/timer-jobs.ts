import type { z } from 'zod';
import { cardAutoResolve } from '../jobs/card-timers.js';
import { enqueue, type JobDef } from '../jobs/registry.js';
import type { ReviewDeps } from './review.types.js';

// The card timer jobs, queued after commit: the trust ladder's deadline (ladder.service.ts), a revision's
// start and a snooze's wake-up (the verbs in review.service.ts).

/** After commit: a timer job. A failed enqueue is logged; the card-timers sweep does the work later. */
export async function schedule<P extends z.ZodType>(deps: ReviewDeps, job: JobDef<P>, payload: z.input<P>, at: number): Promise<void> {
  try {
    await enqueue(deps.queues, job, payload, { delay: Math.max(0, at - Date.now()) });
  } catch (err) {
    deps.logger.warn({ job: job.name, payload, err: (err as Error).message }, 'card timer not queued; the card sweep will act on time');
  }
}

/** The trust ladder's timer for a card at `at` (its job id names both, so each deadline is queued once). */
export function scheduleAutoResolve(deps: ReviewDeps, accountId: string, cardId: string, at: number): Promise<void> {
  return schedule(deps, cardAutoResolve, { accountId, cardId, at }, at);
}
