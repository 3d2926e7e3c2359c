import { mailReconcile } from '../../src/jobs/mail-reconcile.job.js';
import { mailSweep } from '../../src/jobs/mail-sweep.job.js';
import { sequenceStep } from '../../src/jobs/sequence-step.job.js';
import { shipSequenceStep, sweepSequences } from '../../src/shipping/sequence-runner.js';
import { reconcileSend, sweepSends } from '../../src/shipping/reconcile.service.js';
import type { Deps } from '../../src/deps.js';
import { defineProcessor, scheduleRepeating } from '../create-worker.js';

export const reconcileProcessor = defineProcessor({
  job: mailReconcile,
  run: async (p, { rt, log }) => {
    const outcome = await reconcileSend(rt, p.accountId, p.sendId);
    log.info({ sendId: p.sendId, outcome }, 'mail reconcile');
    return outcome;
  },
});

export const mailSweepProcessor = defineProcessor({
  job: mailSweep,
  run: async (_p, { rt }) => {
    const settled = await sweepSends(rt);
    const steps = await sweepSequences(rt, Math.floor(Date.now() / (SWEEPS_PER_BUCKET * rt.config.mail.sweepEveryMs)));
    return { settled, steps };
  },
});

/** A sequence step the sweep finds without a job gets at most one new job per this many sweeps (10 minutes by default). */
const SWEEPS_PER_BUCKET = 10;

export const sequenceStepProcessor = defineProcessor({
  job: sequenceStep,
  run: async (p, { rt, log }) => {
    const outcome = await shipSequenceStep(rt, p.accountId, p.sequenceId, p.step);
    log.info({ sequenceId: p.sequenceId, step: p.step, outcome }, 'sequence step');
    return outcome;
  },
});

export const MAIL_PROCESSORS = [reconcileProcessor, mailSweepProcessor, sequenceStepProcessor];

/** Registers the repeating mail sweep. */
export const scheduleMailSweep = (rt: Pick<Deps, 'config' | 'queues' | 'logger'>) =>
  scheduleRepeating(rt, mailSweep, rt.config.mail.sweepEveryMs);
