import { cardAutoResolve } from '../../src/jobs/card-auto-resolve.job.js';
import { cardRevise } from '../../src/jobs/card-revise.job.js';
import { cardRevisionReturn } from '../../src/jobs/card-revision-return.job.js';
import { cardSweep } from '../../src/jobs/card-sweep.job.js';
import { cardWake } from '../../src/jobs/card-wake.job.js';
import { returnRevision, startRevision, sweepRevisions } from '../../src/agent/card-revision.js';
import { wakeCard } from '../../src/review/timers.service.js';
import { autoResolve, sweepCards } from '../../src/shipping/after-approval.js';
import type { Deps } from '../../src/deps.js';
import { defineProcessor, scheduleRepeating } from '../create-worker.js';

export const autoResolveProcessor = defineProcessor({
  job: cardAutoResolve,
  run: async (p, { rt, log }) => {
    const outcome = await autoResolve(rt, p.accountId, p.cardId, p.at);
    log.info({ cardId: p.cardId, outcome }, 'auto-resolve');
    return outcome;
  },
});

export const wakeProcessor = defineProcessor({
  job: cardWake,
  run: async (p, { rt }) => wakeCard(rt, p.accountId, p.cardId, p.until),
});

export const reviseProcessor = defineProcessor({
  job: cardRevise,
  run: async (p, { rt }) => startRevision(rt, p.accountId, p.cardId, p.version),
});

export const revisionReturnProcessor = defineProcessor({
  job: cardRevisionReturn,
  run: async (p, { rt }) => returnRevision(rt, p.accountId, p.cardId, p.turnId),
});

export const cardSweepProcessor = defineProcessor({
  job: cardSweep,
  run: async (_p, { rt }) => ({ ...(await sweepCards(rt)), revisions: await sweepRevisions(rt) }),
});

export const CARD_TIMER_PROCESSORS = [autoResolveProcessor, wakeProcessor, reviseProcessor, revisionReturnProcessor, cardSweepProcessor];

/** Registers the repeating card sweep (one scheduler per queue however many workers start it). */
export const scheduleCardSweep = (rt: Pick<Deps, 'config' | 'queues' | 'logger'>) =>
  scheduleRepeating(rt, cardSweep, rt.config.review.sweepEveryMs);
