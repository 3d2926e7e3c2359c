import { auditedWrite, type Actor } from '../audit/audit.service.js';
import { isBlocked } from '../blocklist/blocklist.service.js';
import { cannotShip } from '../channels/registry.js';
import type { Trx } from '../db.js';
import { BadRequest, InvalidAction, NotFound, Rejected, UseSend } from '../errors.js';
import type { CardDecided } from '../events/event-map.js';
import { queueEvents } from '../events/outbox.js';
import { cardRevise, cardWake } from '../jobs/card-timers.js';
import { sequenceIdFor, sequencesRepository } from '../mail/sequences.repository.js';
import { memoryNotesRepository } from '../memory/memory-notes.repository.js';
import type { Card } from './cards/card.js';
import { isMailCard, isOutboundSetup, isRunningSequence, kindOfWorkFor, normaliseOptions, OPEN_STATUSES } from './cards/card-shape.js';
import { cardsRepository, type CardChanges, type Guard } from './cards/cards.repository.js';
import { dismissalLesson, outboundTexts, privateTextIn } from './cards/private-text.js';
import { recordDecision } from './decisions.js';
import { withoutAutoResolve } from './ladder.service.js';
import type { ReviewDeps } from './review.types.js';
import { schedule } from './timer-jobs.js';
import { raiseTrust, resetTrust } from './trust.service.js';

// A person's verbs on a card: answer (approve, answer, choose), request changes, snooze, dismiss (the
// queue's reads are in queue.service.ts). They decide and never ship: an approve of work hands the card
// back, and src/shipping/after-approval.ts ships it.

/** One verb's move of a card: the guard it must still match, its changes, and what else its transaction does. */
interface Move {
  guard: Guard;
  changes: CardChanges;
  /** Before the card moves (dismissing a running sequence stops it). */
  before?: (trx: Trx) => Promise<void>;
  /** Once the card moved (trust, the agent's memory, a delivery question's settlement). */
  after?: (trx: Trx) => Promise<void>;
  /** The move is a decision: `card.decided` is recorded in its transaction and queued once it committed. */
  decided?: { decision: CardDecided['decision']; at: number };
}

/** The verb is one the card offers now; otherwise 409 `invalid_action` with the actions it does offer. */
function offers(card: Card, action: string): void {
  if (!card.actions.includes(action)) throw new InvalidAction(card.actions);
}

/** Who acted, as the live stream names them: the person (a dashboard session), else the token's label, else the operator. */
function actorName(actor: Actor): string {
  return actor.personName || actor.tokenLabel || (actor.actor === 'admin' ? 'an operator' : 'a person');
}

/**
 * The verbs' one sequence: load the card (404 when it is not the account's), `check` it (each verb's own
 * refusals, which throw), then make the verb's move in one audited transaction; a race lost to a person
 * or the ladder is 409 `invalid_action` with what the card accepts now. A check that returns null moves
 * nothing (an approve of work: shipping claims the card). Returns the card as read, and as moved.
 */
async function actOnCard(
  deps: ReviewDeps,
  actor: Actor,
  accountId: string,
  id: string,
  check: (card: Card) => Promise<Move | null>,
): Promise<{ card: Card; moved: Card | null }> {
  const card = await cardsRepository(deps.db).find(accountId, id);
  if (!card) throw new NotFound();
  const move = await check(card);
  if (!move) return { card, moved: null };
  const moved = await auditedWrite(deps.db, actor, async (trx) => {
    await move.before?.(trx);
    const done = await cardsRepository(trx).transition(accountId, id, move.guard, move.changes, undefined, actorName(actor));
    if (!done) throw new InvalidAction((await cardsRepository(trx).find(accountId, id))?.actions ?? []);
    await move.after?.(trx);
    const event = move.decided ? await recordDecision(trx, card, move.decided.decision, 'person', actor, move.decided.at) : null;
    return { result: { done, event }, targetId: id };
  });
  if (moved.event) await queueEvents(deps, [moved.event]);
  return { card, moved: moved.done };
}

/** What a chosen option means for shipped work, in the decision's transaction (shipping settles a delivery question). */
export type SettleChoice = (trx: Trx, card: Card, choice: string) => Promise<void>;

export interface AnswerBody {
  action: 'approve' | 'answer' | 'choose';
  text?: string;
  optionValues?: string[];
}

/** Resolved here, or approved work for the shipping area to ship (its claim is the approval). */
export type Answered = { ok: true; kind: string; result: Record<string, unknown> } | { ship: Card };

/** The one option a `choose` picked (400 unless exactly one of the card's), or undefined for the other actions. */
function choiceOf(card: Card, body: AnswerBody): string | undefined {
  // `optionValues` on another action, and `answer` without text, are refused by the body's schema.
  if (body.action !== 'choose') return undefined;
  const values = (normaliseOptions(card.options) ?? []).map((o) => o.value);
  const picked = body.optionValues ?? [];
  if (picked.length !== 1 || !values.includes(picked[0]!)) {
    throw new BadRequest(
      `optionValues must be exactly one of the card's option values: ${values.map((v) => JSON.stringify(v)).join(', ')}`,
    );
  }
  return picked[0];
}

/** An approve's refusals: a blocked recipient, private text, work whose connection is missing (409 `rejected`). */
async function checkApprove(deps: ReviewDeps, card: Card): Promise<void> {
  const to = typeof card.payload.to === 'string' ? card.payload.to : null;
  if (to && (await isBlocked(deps.db, card.accountId, to))) throw new Rejected(`${to} is on the block list; this cannot ship`);
  const quotes = kindOfWorkFor(card) ? await privateTextIn(deps.db, card.accountId, outboundTexts(card)) : null;
  if (quotes) throw new Rejected(`this card ${quotes}; nothing shipped: request changes so the agent rewrites it`);
  // Work ships through its adapter or not at all: never approved into a void (409 naming the connection).
  const missing = card.kindOfWork ? await cannotShip(deps.db, card.accountId, card.kindOfWork) : null;
  if (missing) throw new Rejected(missing);
}

/**
 * `answer`: approve, answer or choose, once. A mail card is 409 `use_send`; a verb the card no longer
 * offers (or a race lost to a person or the ladder) is 409 `invalid_action` with the current actions.
 * An approve of work moves nothing here: it returns `{ ship: card }`, and the caller ships it.
 */
export async function answerCard(
  deps: ReviewDeps,
  actor: Actor,
  accountId: string,
  id: string,
  body: AnswerBody,
  settle: SettleChoice,
): Promise<Answered> {
  const text = body.text?.trim() ? body.text : undefined;
  const resolution: Record<string, unknown> = { action: body.action, by: 'person' };
  const { card, moved } = await actOnCard(deps, actor, accountId, id, async (card) => {
    if (isMailCard(card)) throw new UseSend(`this is a mail card; send it with POST /api/v1/review/${card.id}/send`, card.actions);
    offers(card, body.action);
    const choice = choiceOf(card, body);
    if (body.action === 'approve') await checkApprove(deps, card);
    if (body.action === 'approve' && card.kindOfWork) return null;
    const at = Date.now();
    Object.assign(resolution, { at }, text ? { text } : {}, choice !== undefined ? { optionValues: [choice] } : {});
    return {
      // The version guard: a card revised since it was read is not the card the person approved.
      guard: { statuses: OPEN_STATUSES, version: card.version },
      changes: { status: 'resolved', resolvedAt: at, resolution, autoResolveAt: null, snoozedUntil: null },
      decided: { decision: body.action, at },
      after: async (trx) => {
        if (choice) await settle(trx, card, choice);
        if (body.action === 'approve' && !text && card.version === 1 && card.kindOfWork && card.kindOfWork !== 'spend') {
          await raiseTrust(trx, accountId, card.kindOfWork, at);
        }
      },
    };
  });
  if (!moved) return { ship: card };
  return { ok: true as const, kind: card.kind, result: resolution };
}

/** `request-changes`: the card waits as `needs_revision`; the agent starts revising after the configured delay. */
export async function requestChanges(deps: ReviewDeps, actor: Actor, accountId: string, id: string, text: string) {
  const due = Date.now() + deps.config.review.revisionDelayMs;
  const { moved } = await actOnCard(deps, actor, accountId, id, async (card) => {
    offers(card, 'request_changes');
    return {
      guard: { statuses: OPEN_STATUSES, version: card.version },
      changes: {
        status: 'needs_revision',
        requestedChanges: text,
        revisionDueAt: due,
        revisionTurnId: null,
        autoResolveAt: null,
        snoozedUntil: null,
        detail: withoutAutoResolve(card),
      },
    };
  });
  await schedule(deps, cardRevise, { accountId, cardId: id, version: moved!.version }, due);
  return { ok: true as const };
}

/** `snooze`: hidden until `until`; any auto-resolve deadline is cancelled. */
export async function snoozeCard(deps: ReviewDeps, actor: Actor, accountId: string, id: string, until: number) {
  await actOnCard(deps, actor, accountId, id, async (card) => {
    offers(card, 'snooze');
    if (until <= Date.now()) throw new BadRequest('until must be in the future');
    return {
      guard: { statuses: OPEN_STATUSES, version: card.version },
      changes: { status: 'snoozed', snoozedUntil: until, autoResolveAt: null, detail: withoutAutoResolve(card) },
    };
  });
  await schedule(deps, cardWake, { accountId, cardId: id, until }, until);
  return { ok: true as const, status: 'snoozed' as const, snoozedUntil: until };
}

/**
 * `dismiss`: closed without shipping. Trust for that kind of work goes back to zero, the reason goes
 * into the agent's memory, and an outbound-setup card's proposal is cancelled with it.
 */
const SEQUENCE_DISMISSED = 'a person dismissed the sequence';

export async function dismissCard(deps: ReviewDeps, actor: Actor, accountId: string, id: string, reason: string | undefined) {
  const resolution: Record<string, unknown> = {};
  await actOnCard(deps, actor, accountId, id, async (card) => {
    offers(card, 'dismiss');
    const at = Date.now();
    // A running sequence's first mail went out: dismissing it stops the follow-ups, and its resolution keeps what was sent.
    const running = isRunningSequence(card);
    Object.assign(
      resolution,
      running ? { ...(card.resolution as Record<string, unknown>), sequence: 'stopped', sequenceStopReason: SEQUENCE_DISMISSED } : {},
      { action: 'dismiss', by: 'person', at, reason: reason ?? null },
      isOutboundSetup(card) ? { proposal: 'cancelled' } : {},
    );
    const stop = { accountId, id: sequenceIdFor(id), reason: SEQUENCE_DISMISSED };
    return {
      guard: { statuses: running ? ['sent'] : [...OPEN_STATUSES, 'needs_revision'] },
      changes: { status: 'dismissed', resolvedAt: at, resolution, autoResolveAt: null, snoozedUntil: null, revisionDueAt: null },
      decided: { decision: 'dismiss', at },
      // The sequence's row stops here; the card says so in the resolution this move writes.
      before: async (trx) => {
        if (running) await sequencesRepository(trx).stop([stop], at);
      },
      after: async (trx) => {
        if (card.kindOfWork) await resetTrust(trx, accountId, card.kindOfWork, at);
        await memoryNotesRepository(trx).remember(accountId, dismissalLesson(card.title, card.sourceType, reason), card.turnId, at);
      },
    };
  });
  return { ok: true as const, status: 'dismissed' as const, ...(resolution.proposal ? { proposal: 'cancelled' as const } : {}) };
}
