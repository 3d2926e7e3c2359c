import type { Queryable } from '../db.js';
import { cardsRepository, type Card } from './cards/cards.repository.js';
import type { ReviewDeps } from './review.types.js';

/**
 * The card side of a revision (request-changes → the agent revises → the card returns). The agent's
 * side (recording and dispatching the revision turn, reading how it ended) is src/agent/messages/card-revision.ts,
 * which calls these: review stands below the agent and never starts a turn itself.
 */

/** The card a `card.revise` job of this version should start revising, or null when that is done or moot. */
export async function cardToRevise(q: Queryable, accountId: string, cardId: string, version: number): Promise<Card | null> {
  const card = await cardsRepository(q).find(accountId, cardId);
  if (card?.status !== 'needs_revision' || card.version !== version || card.revisionTurnId) return null;
  return card;
}

/** Claims the card for its revision turn, on the transaction that records the turn. False: claimed already. */
export async function claimRevision(q: Queryable, accountId: string, cardId: string, version: number, turnId: string): Promise<boolean> {
  const claimed = await cardsRepository(q).transition(
    accountId,
    cardId,
    { statuses: ['needs_revision'], version, revisionTurnId: null },
    { revisionTurnId: turnId },
  );
  return claimed !== null;
}

/** The card waiting for this revision turn to end, or null when it was returned already (or never was). */
export async function cardInRevision(q: Queryable, accountId: string, cardId: string, turnId: string): Promise<Card | null> {
  const card = await cardsRepository(q).find(accountId, cardId);
  if (card?.status !== 'needs_revision' || card.revisionTurnId !== turnId) return null;
  return card;
}

/** How the revision turn ended, as the agent read it. */
export interface RevisionTurnEnd {
  turnId: string;
  /** The turn's status, or `missing`. */
  turnStatus: string;
  /** The turn's last replies, joined; null when it said nothing. */
  agentNote: string | null;
}

/**
 * Once the revision turn is over, the card returns to `pending` as the next version. The agent revises
 * with its ordinary tools: a card of the same sourceType that the revision turn produced is folded into
 * this one (its title, summary, prompt and payload become the new version; it is closed as `resolved`
 * with `resolution.action = 'merged'`). The earlier version and the request go to `history`.
 */
export async function returnRevisedCard(deps: Pick<ReviewDeps, 'db'>, card: Card, end: RevisionTurnEnd): Promise<boolean> {
  const { accountId, id: cardId } = card;
  const { turnId, agentNote } = end;
  const produced = (await cardsRepository(deps.db).listByTurn(accountId, turnId)).find(
    (c) => c.id !== cardId && c.status === 'pending' && c.sourceType === card.sourceType,
  );
  const at = Date.now();
  const entry = {
    version: card.version,
    requestedChanges: card.requestedChanges,
    at,
    turnId,
    turnStatus: end.turnStatus,
    agentNote,
    previous: { title: card.title, summary: card.summary, prompt: card.prompt, payload: card.payload },
    revisedFrom: produced?.id ?? null,
  };
  const detail = {
    ...((card.detail as Record<string, unknown> | null) ?? {}),
    revision: { version: card.version + 1, requestedChanges: card.requestedChanges, agentNote, changed: Boolean(produced) },
  };
  return deps.db.transaction(async (trx) => {
    const repo = cardsRepository(trx);
    if (produced) {
      const merged = await repo.transition(
        accountId,
        produced.id,
        { statuses: ['pending'] },
        {
          status: 'resolved',
          resolvedAt: at,
          resolution: { action: 'merged', by: 'system', at, into: cardId },
          autoResolveAt: null,
        },
      );
      if (!merged) throw new Error(`revised card ${produced.id} changed while being folded in; retrying`);
    }
    const back = await repo.transition(
      accountId,
      cardId,
      { statuses: ['needs_revision'], version: card.version, revisionTurnId: turnId },
      {
        status: 'pending',
        version: card.version + 1,
        history: [...card.history, entry],
        detail,
        ...(produced ? { title: produced.title, summary: produced.summary, prompt: produced.prompt, payload: produced.payload } : {}),
        requestedChanges: null,
        revisionDueAt: null,
        revisionTurnId: null,
        ladderChecked: true,
      },
    );
    if (!back && produced) throw new Error(`card ${cardId} changed while its revision was returned; retrying`);
    return back !== null;
  });
}

/** Revisions whose moment passed without their job (the repair sweep): each card's version and revision turn. */
export async function revisionsDue(
  q: Queryable,
  limit: number,
  now = Date.now(),
): Promise<Array<{ accountId: string; id: string; version: number; revisionTurnId: string | null }>> {
  const repo = cardsRepository(q);
  const out = [];
  for (const c of (await repo.due(now, limit)).revision) {
    const card = await repo.find(c.accountId, c.id);
    if (card) out.push({ accountId: c.accountId, id: c.id, version: card.version, revisionTurnId: card.revisionTurnId });
  }
  return out;
}
