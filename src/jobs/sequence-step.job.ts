import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * What else keys a step's job: `due` for the job queued when the step before it shipped (one per step),
 * or a sweep's time bucket for a step the sweep found overdue without a job (at most one per bucket).
 */
export type StepKey = { by: 'due' } | { by: 'sweep'; bucket: number };

/** Ships one later step of an approved sequence once it is due; the step's fence makes a repeat harmless. */
export const sequenceStep = defineJob({
  queue: 'mail-sends',
  name: 'sequence.step',
  payload: z.object({ accountId: z.string().min(1), sequenceId: z.string().min(1), step: z.number().int().min(1) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 5_000, jitter: 0.2 } },
  description:
    "Ships a sequence's next follow-up when it is due, unless a reply, bounce, unsubscribe or dismissal stopped it; " +
    'one fence per (card, step), so a repeat ships nothing twice.',
  jobId: (p, k: StepKey) => `sequence-step-${p.sequenceId}-${p.step}${k.by === 'sweep' ? `-sweep-${k.bucket}` : ''}`,
});
