import { deliverEvent } from '../src/events/outbox.js';
import { returnRevision, startRevision, sweepRevisions } from '../src/agent/messages/card-revision.js';
import { cardTimersQueue } from '../src/jobs/card-timers.js';
import { wakeCard } from '../src/review/timers.service.js';
import { autoResolve, sweepCards } from '../src/shipping/after-approval.js';
import { eventHandlers } from './event-handlers.js';
import { definePool } from './pool.js';

/** The card-timers pool: CARD_TIMERS_CONCURRENCY timers at a time; its sweep is scheduled at start. */
export const cardTimersPool = definePool(cardTimersQueue, {
  handlers: {
    cardAutoResolve: async (p, { deps, log }) => {
      const outcome = await autoResolve(deps, p.accountId, p.cardId, p.at);
      log.info({ cardId: p.cardId, outcome }, 'auto-resolve');
      return outcome;
    },
    cardWake: async (p, { deps }) => wakeCard(deps, p.accountId, p.cardId, p.until),
    cardRevise: async (p, { deps }) => startRevision(deps, p.accountId, p.cardId, p.version),
    cardRevisionReturn: async (p, { deps }) => returnRevision(deps, p.accountId, p.cardId, p.turnId),
    cardSweep: async (_p, { deps }) => ({ ...(await sweepCards(deps)), revisions: await sweepRevisions(deps) }),
    /** A decision's follow-ups: each area's handler (registered for this delivery) once per event (src/events/outbox.ts). */
    eventDeliver: async (p, { deps }) => deliverEvent(deps, eventHandlers(), p),
  },
  options: (deps) => ({ concurrency: deps.config.review.timersConcurrency }),
});
