import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';
import { defineSweep } from './sweep.js';

/**
 * Settles one fenced mail send whose provider answer was lost: lookup by idempotency key, resend under
 * the same key where the transport dedupes, or (past the window) hand it to a person. Never a blind resend.
 */
export const mailReconcile = defineJob({
  queue: 'shipments',
  name: 'mail.reconcile',
  payload: z.object({ accountId: z.string().min(1), sendId: z.string().min(1) }),
  options: {
    attempts: 12,
    backoff: { type: 'exponential', delay: 5_000, jitter: 0.2 },
  },
  description: 'Settles a mail send whose answer was lost (lookup, keyed resend, or a card for a person); a settled send is a no-op.',
  // One job per reconciliation attempt of the send.
  jobId: (p, r: { attempt: number }) => `mail-reconcile-${p.sendId}-${r.attempt}`,
});

/**
 * Every MAIL_SWEEP_MS: finds fenced sends no reconciliation is working on (a crashed sender, a lost job)
 * and settles them, and queues overdue sequence steps that have no job.
 */
export const mailSweep = defineSweep({
  queue: 'shipments',
  name: 'mail.sweep',
  description: 'Reconciles fenced mail sends left without a job; each settle is a conditional update.',
  schedulerId: 'mail-sweep',
  everyMs: (config) => config.mail.sweepEveryMs,
});

/**
 * What else keys a step's job: `due` for the job queued when the step before it shipped (one per step),
 * a sweep's time bucket for a step the sweep found overdue without a job (at most one per bucket), or
 * `early` for a job that ran before its step was due and queues itself again for then: a fresh id (the
 * time it ran), since the running job still holds its own id and a second job under it would be dropped.
 */
export type StepKey = { by: 'due' } | { by: 'sweep'; bucket: number } | { by: 'early'; at: number };

/** Ships one later step of an approved sequence once it is due; the step's fence makes a repeat harmless. */
export const sequenceStep = defineJob({
  queue: 'shipments',
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

/**
 * The shipments queue: what settles and continues shipped work of every kind (fences of mail, network
 * messages, ad tests, posts, budget changes) (workers/shipments.ts). Named `mail-sends` until this
 * release; that name is still drained for one release (docs/decisions/jobs.md, "Renamed queues").
 */
export const shipmentsQueue = defineQueue('shipments', { mailReconcile, mailSweep, sequenceStep }, { formerly: 'mail-sends' });
