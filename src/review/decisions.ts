import type { Actor } from '../audit/audit.service.js';
import type { Queryable } from '../db.js';
import type { CardDecided, DecidedBy } from '../events/event-map.js';
import { type EventRef, recordEvent } from '../events/outbox.js';
import type { Card } from './cards/card.js';

/**
 * Records `card.decided` in the decision's transaction (every path that decides a card calls this: a person's
 * verbs, the ladder's and a setting's auto-resolve, the shipping path's claim); the caller queues the answered id
 * with `queueEvents` once the transaction committed. What follows a decision is the registered areas' business
 * (docs/architecture.md, "Events").
 */
export function recordDecision(
  trx: Queryable,
  card: Card,
  decision: CardDecided['decision'],
  decidedBy: DecidedBy,
  actor: Actor | null,
  at: number,
): Promise<EventRef> {
  return recordEvent(trx, 'card.decided', {
    accountId: card.accountId,
    cardId: card.id,
    kind: card.kind,
    sourceType: card.sourceType,
    decision,
    decidedBy,
    actor,
    payload: card.payload,
    at,
  });
}
