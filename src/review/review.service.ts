import { auditedWrite, type Actor } from '../audit/audit.service.js';
import { isBlocked } from '../blocklist/blocklist.service.js';
import type { Trx } from '../db.js';
import { BadRequest, InvalidAction, NotFound, Rejected, UseSend } from '../errors.js';
import { cardRevise } from '../jobs/card-revise.job.js';
import { cardWake } from '../jobs/card-wake.job.js';
import { cannotShip } from '../channels/registry.js';
import { memoryNotesRepository } from '../memory/memory-notes.repository.js';
import { settleByPerson } from '../shipping/reconcile.service.js';
import { shipCard } from '../shipping/ship-card.service.js';
import {
  DELIVERY_QUESTION_SOURCE,
  isMailCard,
  isOutboundSetup,
  isRunningSequence,
  kindOfWorkFor,
  normaliseOptions,
  OPEN_STATUSES,
} from './cards/card-shape.js';
import { sequenceIdFor } from '../mail/sequences.repository.js';
import { stopSequences } from '../shipping/sequence-state.js';
import { dismissalLesson, outboundTexts, privateTextIn } from './cards/private-text.js';
import { cardsRepository, type Card } from './cards/cards.repository.js';
import { schedule, withoutAutoResolve } from './ladder.service.js';
import type { ReviewDeps } from './review.types.js';
import { raiseTrust, resetTrust } from './trust.service.js';

// A person's verbs on a card: answer (approve, answer, choose), request changes, snooze, dismiss
// (the queue's reads are in queue.service.ts, a card's way in in new-card.service.ts).

async function loadOpen(deps: ReviewDeps, accountId: string, id: string): Promise<Card> {
  const card = await cardsRepository(deps.db).find(accountId, id);
  if (!card) throw new NotFound();
  return card;
}

/** The loser of a conditional update: 409 with what the card accepts now. */
async function lost(trx: Trx, accountId: string, id: string): Promise<never> {
  const now = await cardsRepository(trx).find(accountId, id);
  throw new InvalidAction(now?.actions ?? []);
}

/**
 * What a person's decision means outside the review queue (a workflow gate continues or a proposed
 * workflow goes live): called once the decision committed. The caller names it, because those areas
 * stand above review (docs/decisions.md, "Areas and their layers").
 */
export type AfterDecision = (card: Card, approved: boolean) => Promise<void>;

export interface AnswerBody {
  action: 'approve' | 'answer' | 'choose';
  text?: string;
  optionValues?: string[];
}

/**
 * `answer`: approve, answer or choose, once. A mail card is 409 `use_send`; a verb the card no longer
 * offers (or a race lost to a person or the ladder) is 409 `invalid_action` with the current actions.
 */
export async function answerCard(deps: ReviewDeps, actor: Actor, accountId: string, id: string, body: AnswerBody, after: AfterDecision) {
  const card = await loadOpen(deps, accountId, id);
  if (isMailCard(card)) throw new UseSend(`this is a mail card; send it with POST /api/v1/review/${card.id}/send`, card.actions);
  if (!card.actions.includes(body.action)) throw new InvalidAction(card.actions);
  const text = body.text?.trim() ? body.text : undefined;
  let choice: string | undefined;
  if (body.action === 'answer' && !text) throw new BadRequest('text is required when action is answer');
  if (body.action === 'choose') {
    const values = (normaliseOptions(card.options) ?? []).map((o) => o.value);
    const picked = body.optionValues ?? [];
    if (picked.length !== 1 || !values.includes(picked[0]!)) {
      throw new BadRequest(
        `optionValues must be exactly one of the card's option values: ${values.map((v) => JSON.stringify(v)).join(', ')}`,
      );
    }
    choice = picked[0];
  } else if (body.optionValues !== undefined) {
    throw new BadRequest('optionValues is only for action choose');
  }
  const to = typeof card.payload.to === 'string' ? card.payload.to : null;
  if (body.action === 'approve' && to && (await isBlocked(deps.db, accountId, to))) {
    throw new Rejected(`${to} is on the block list; this cannot ship`);
  }
  const quotes = body.action === 'approve' && kindOfWorkFor(card) ? await privateTextIn(deps.db, accountId, outboundTexts(card)) : null;
  if (quotes) throw new Rejected(`this card ${quotes}; nothing shipped: request changes so the agent rewrites it`);
  if (body.action === 'approve' && card.kindOfWork) {
    // Work ships through its adapter or not at all: never approved into a void (409 naming the connection).
    const missing = await cannotShip(deps.db, accountId, card.kindOfWork);
    if (missing) throw new Rejected(missing);
    const shipped = await shipCard(deps, actor, card, { decidedBy: 'person' });
    await after(card, true);
    return { ok: true as const, kind: card.kind, result: { action: 'approve', by: 'person', at: Date.now(), sendId: shipped.sendId } };
  }

  const at = Date.now();
  const resolution: Record<string, unknown> = { action: body.action, by: 'person', at };
  if (text) resolution.text = text;
  if (choice !== undefined) resolution.optionValues = [choice];
  const result = await auditedWrite(deps.db, actor, async (trx) => {
    // The version guard: a card revised since it was read is not the card the person approved.
    const done = await cardsRepository(trx).transition(
      accountId,
      id,
      { statuses: OPEN_STATUSES, version: card.version },
      {
        status: 'resolved',
        resolvedAt: at,
        resolution,
        autoResolveAt: null,
        snoozedUntil: null,
      },
    );
    if (!done) return lost(trx, accountId, id);
    if (card.sourceType === DELIVERY_QUESTION_SOURCE && typeof card.payload.sendId === 'string' && choice) {
      await settleByPerson(trx, accountId, card.payload.sendId, choice);
    }
    if (body.action === 'approve' && !text && card.version === 1 && card.kindOfWork && card.kindOfWork !== 'spend') {
      await raiseTrust(trx, accountId, card.kindOfWork, at);
    }
    return { result: resolution, targetId: id };
  });
  if (body.action === 'approve') await after(card, true);
  return { ok: true as const, kind: card.kind, result };
}

/** `request-changes`: the card waits as `needs_revision`; the agent starts revising after the configured delay. */
export async function requestChanges(deps: ReviewDeps, actor: Actor, accountId: string, id: string, text: string) {
  const card = await loadOpen(deps, accountId, id);
  if (!card.actions.includes('request_changes')) throw new InvalidAction(card.actions);
  const due = Date.now() + deps.config.review.revisionDelayMs;
  const updated = await auditedWrite(deps.db, actor, async (trx) => {
    const done = await cardsRepository(trx).transition(
      accountId,
      id,
      { statuses: OPEN_STATUSES, version: card.version },
      {
        status: 'needs_revision',
        requestedChanges: text,
        revisionDueAt: due,
        revisionTurnId: null,
        autoResolveAt: null,
        snoozedUntil: null,
        detail: withoutAutoResolve(card),
      },
    );
    if (!done) return lost(trx, accountId, id);
    return { result: done, targetId: id };
  });
  await schedule(deps, cardRevise, { accountId, cardId: id, version: updated.version }, due);
  return { ok: true as const };
}

/** `snooze`: hidden until `until`; any auto-resolve deadline is cancelled. */
export async function snoozeCard(deps: ReviewDeps, actor: Actor, accountId: string, id: string, until: number) {
  const card = await loadOpen(deps, accountId, id);
  if (!card.actions.includes('snooze')) throw new InvalidAction(card.actions);
  if (until <= Date.now()) throw new BadRequest('until must be in the future');
  await auditedWrite(deps.db, actor, async (trx) => {
    const done = await cardsRepository(trx).transition(
      accountId,
      id,
      { statuses: OPEN_STATUSES, version: card.version },
      {
        status: 'snoozed',
        snoozedUntil: until,
        autoResolveAt: null,
        detail: withoutAutoResolve(card),
      },
    );
    if (!done) return lost(trx, accountId, id);
    return { result: done, targetId: id };
  });
  await schedule(deps, cardWake, { accountId, cardId: id, until }, until);
  return { ok: true as const, status: 'snoozed' as const, snoozedUntil: until };
}

/**
 * `dismiss`: closed without shipping. Trust for that kind of work goes back to zero, the reason goes
 * into the agent's memory, and an outbound-setup card's proposal is cancelled with it.
 */
const SEQUENCE_DISMISSED = 'a person dismissed the sequence';

export async function dismissCard(
  deps: ReviewDeps,
  actor: Actor,
  accountId: string,
  id: string,
  reason: string | undefined,
  after: AfterDecision,
) {
  const card = await loadOpen(deps, accountId, id);
  if (!card.actions.includes('dismiss')) throw new InvalidAction(card.actions);
  const at = Date.now();
  // A running sequence's first mail went out: dismissing it stops the follow-ups, and its resolution keeps what was sent.
  const running = isRunningSequence(card);
  const resolution: Record<string, unknown> = {
    ...(running ? (card.resolution as Record<string, unknown>) : {}),
    ...(running ? { sequence: 'stopped', sequenceStopReason: SEQUENCE_DISMISSED } : {}),
    action: 'dismiss',
    by: 'person',
    at,
    reason: reason ?? null,
  };
  if (isOutboundSetup(card)) resolution.proposal = 'cancelled';
  await auditedWrite(deps.db, actor, async (trx) => {
    if (running) await stopSequences(trx, accountId, { id: sequenceIdFor(id) }, SEQUENCE_DISMISSED, at);
    const done = await cardsRepository(trx).transition(
      accountId,
      id,
      { statuses: running ? ['sent'] : [...OPEN_STATUSES, 'needs_revision'] },
      {
        status: 'dismissed',
        resolvedAt: at,
        resolution,
        autoResolveAt: null,
        snoozedUntil: null,
        revisionDueAt: null,
      },
    );
    if (!done) return lost(trx, accountId, id);
    if (card.kindOfWork) await resetTrust(trx, accountId, card.kindOfWork, at);
    await memoryNotesRepository(trx).remember(accountId, dismissalLesson(card.title, card.sourceType, reason), card.turnId, at);
    return { result: done, targetId: id };
  });
  await after(card, false);
  return { ok: true as const, status: 'dismissed' as const, ...(resolution.proposal ? { proposal: 'cancelled' as const } : {}) };
}
