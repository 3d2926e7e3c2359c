import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * What else keys a step's job: `due` for the job queued when the step before it shipped (one per step),
 * a sweep's time bucket for a step the sweep found overdue without a job (at most one per bucket), or
 * `early` for a job that ran before its step was due and queues itself again for then: a fresh id (the
 * time it ran), since the running job still holds its own id and a second job under it would be dropped.
 */
export type StepKey = { by: 'due' } | { by: 'sweep'; bucket: number } | { by: 'early'; at: number };

/** Ships one later step of an approved sequence once it is due; the step's fence makes a repeat harmless. */
export const sequenceStep = defineJob({
  queue: 'mail-sends',
  name: 'sequence.step',
  payload: z.object({ accountId: z.string().min(1), sequenceId: z.string().min(1), step: z.number().int().min(1) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 5_000, jitter: 0.2 } },
  description:
    "Ships a sequence's next follow-up when it is due, unless a reply, bounce, unsubscribe or dismissal stopped it; " +
    'one fence per (card, step), so a repeat ships nothing twice.',
  jobId: (p, k: StepKey) => `sequence-step-${p.sequenceId}-${p.step}${stepKeySuffix(k)}`,
});

function stepKeySuffix(k: StepKey): string {
  if (k.by === 'sweep') return `-sweep-${k.bucket}`;
  if (k.by === 'early') return `-early-${k.at}`;
  return '';
}
