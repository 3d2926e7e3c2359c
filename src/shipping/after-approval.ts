import type { Actor } from '../audit/audit.service.js';
import type { Trx } from '../db.js';
import { DELIVERY_QUESTION_SOURCE } from '../review/cards/card-shape.js';
import type { Card } from '../review/cards/card.js';
import { answerCard, type AnswerBody } from '../review/review.service.js';
import { resolveOnDeadline, sweepTimers, type ShipApproved } from '../review/timers.service.js';
import type { OnSent, ShipDeps } from './hold-rule.js';
import { settleByPerson } from './reconcile.service.js';
import { shipCard } from './ship-card.service.js';

// Where a decision meets the shipping path: review's verbs and timers decide and never ship; the answer
// route and the card-timers jobs call these, which ship what was approved.

/** The shipping path for work the trust ladder or a setting approved (decided by no person: no audit row). */
const shipApproved =
  (deps: ShipDeps): ShipApproved =>
  (card, opts) =>
    shipCard(deps, null, card, opts);

/** A person's answer to a delivery question settles its fence, in the answer's transaction. */
const settleDeliveryAnswer =
  (onSent: OnSent) =>
  async (trx: Trx, card: Card, choice: string): Promise<void> => {
    if (card.sourceType === DELIVERY_QUESTION_SOURCE && typeof card.payload.sendId === 'string') {
      await settleByPerson(trx, card.accountId, card.payload.sendId, choice, onSent);
    }
  };

/**
 * A person's answer (the API's POST /review/{id}/answer, and any other door's): review's `answerCard` decides; an
 * approve of work comes back unmoved, and ships here through the fenced path (its claim is the approval, and records
 * `card.decided`). What follows the decision is the event's handlers' business, never the caller's.
 */
export async function answerAndShip(deps: ShipDeps, actor: Actor, accountId: string, id: string, body: AnswerBody) {
  const answered = await answerCard(deps, actor, accountId, id, body, settleDeliveryAnswer(deps.onSent));
  if (!('ship' in answered)) return answered;
  const card = answered.ship;
  const shipped = await shipCard(deps, actor, card, { decidedBy: 'person' });
  // Held for its send window (a sequence's first mail): no send yet, so no send id; `sendAt` says when.
  const sent = 'sendId' in shipped ? { sendId: shipped.sendId } : { sendAt: shipped.sendAt };
  return { ok: true as const, kind: card.kind, result: { action: 'approve', by: 'person', at: Date.now(), ...sent } };
}

/** The `card.auto-resolve` job: the ladder's deadline (review's `resolveOnDeadline`), shipping what it approves. */
export function autoResolve(deps: ShipDeps, accountId: string, cardId: string, at: number) {
  return resolveOnDeadline(deps, shipApproved(deps), accountId, cardId, at);
}

/** The card-timers repair sweep (review's `sweepTimers`), shipping what a missed deadline approves. */
export function sweepCards(deps: ShipDeps, limit?: number): Promise<Record<string, number>> {
  return sweepTimers(deps, shipApproved(deps), limit);
}
