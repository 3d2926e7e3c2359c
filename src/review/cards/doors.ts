import type { Queryable } from '../../db.js';
import { cardsRepository, type Card, type NewCard } from './cards.repository.js';

/**
 * The card area's doors: every card enters the queue through `addCard` (the agent's tools, workflow
 * gates, `shipBySetting`, the delivery question, the demo seed), and other areas read cards here. Only
 * review and shipping move cards, through the repository's guarded `transition`;
 * test/architecture/imports.test.ts fails on a write to review_cards outside src/review/cards/.
 */

/**
 * Records a new card in the queue (pending unless it says otherwise), on the caller's transaction. The
 * trust ladder looks at it afterwards: the card-timers sweep applies it to every card not yet checked.
 */
export function addCard(q: Queryable, card: NewCard): Promise<Card> {
  return cardsRepository(q).insert(card);
}

/** What a brain is shown of the queue: the newest waiting cards and how many wait in all. */
export async function waitingCards(q: Queryable, accountId: string, limit: number) {
  const cards = cardsRepository(q);
  const [waiting, count] = await Promise.all([cards.listWaiting(accountId, limit), cards.countWaiting(accountId)]);
  return { waiting: waiting.map((c) => ({ title: c.title, sourceType: c.sourceType, createdAt: c.createdAt })), count };
}

/** The run a workflow gate card holds up, or null when the card is not a gate (any account). */
export async function gateRunId(q: Queryable, cardId: string): Promise<string | null> {
  const card = await q('review_cards')
    .where({ id: cardId, source_type: 'workflow_gate' })
    .first<{ payload: { runId?: string } } | undefined>('payload');
  return card?.payload.runId ?? null;
}

/** The first card a turn made (what a webhook delivery's outcome names), or null. */
export async function firstCardOfTurn(
  q: Queryable,
  accountId: string,
  turnId: string,
): Promise<{ id: string; sourceType: string; status: string } | null> {
  const row = await q('review_cards')
    .where({ account_id: accountId, turn_id: turnId })
    .orderBy('created_at')
    .first<{ id: string; source_type: string; status: string } | undefined>('id', 'source_type', 'status');
  return row ? { id: row.id, sourceType: row.source_type, status: row.status } : null;
}

/**
 * Retention's door (src/retention/): deletes at most `limit` cards resolved, sent or dismissed before `before`
 * in one statement on the caller's transaction; answers how many.
 */
export function deleteFinishedCards(q: Queryable, before: number, limit: number): Promise<number> {
  return cardsRepository(q).deleteFinished(before, limit);
}

/**
 * SQL text for a statement of another area that must read card states inside it (an experiment's counts, the
 * `/results` harness): the cards as a table of (account_id, id, status, resolution, created_at, resolved_at), a
 * subquery Postgres folds into the statement. Read-only.
 */
export const CARD_STATES_SQL = '(SELECT account_id, id, status, resolution, created_at, resolved_at FROM review_cards)';

/** The ids among `ids` of the account's cards in one of `statuses`. */
export async function cardsInStatus(q: Queryable, accountId: string, ids: string[], statuses: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = (await q('review_cards').where({ account_id: accountId }).whereIn('id', ids).whereIn('status', statuses).select('id')) as {
    id: string;
  }[];
  return new Set(rows.map((r) => r.id));
}
