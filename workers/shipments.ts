import { shipmentsQueue } from '../src/jobs/shipments.js';
import { reconcileSend, sweepSends } from '../src/shipping/reconcile.service.js';
import { shipSequenceStep, sweepSequences } from '../src/shipping/sequence-runner.js';
import { definePool } from './pool.js';

/** A sequence step the sweep finds without a job gets at most one new job per this many sweeps (10 minutes by default). */
const SWEEPS_PER_BUCKET = 10;

/** The shipments pool: MAIL_SENDS_CONCURRENCY jobs at a time; its sweep is scheduled at start. */
export const shipmentsPool = definePool(shipmentsQueue, {
  handlers: {
    mailReconcile: async (p, { deps, log }) => {
      const outcome = await reconcileSend(deps, p.accountId, p.sendId);
      log.info({ sendId: p.sendId, outcome }, 'mail reconcile');
      return outcome;
    },
    mailSweep: async (_p, { deps }) => {
      const settled = await sweepSends(deps);
      const steps = await sweepSequences(deps, Math.floor(Date.now() / (SWEEPS_PER_BUCKET * deps.config.mail.sweepEveryMs)));
      return { settled, steps };
    },
    sequenceStep: async (p, { deps, log }) => {
      const outcome = await shipSequenceStep(deps, p.accountId, p.sequenceId, p.step);
      log.info({ sequenceId: p.sequenceId, step: p.step, outcome }, 'sequence step');
      return outcome;
    },
  },
  options: (deps) => ({ concurrency: deps.config.mail.sendsConcurrency }),
});
