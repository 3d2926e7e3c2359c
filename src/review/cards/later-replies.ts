import type { Queryable } from '../../db.js';
import { cardsRepository } from './cards.repository.js';

/**
 * The review side of a reply flood (docs/decisions/agent-wakes.md): while the card a reply's wake made
 * still waits for a person, later replies on that thread start no turn; the card says they came.
 */

/** Statuses in which a card still waits for a person: in the queue, snoozed, or being revised. */
const WAITING = ['pending', 'needs_revision', 'snoozed'] as const;

/** Replies that came on a thread after the one its card answers. */
export interface LaterReplies {
  /** How many (at least 1). */
  count: number;
  /** Who sent them: an address or a profile URL. */
  from: string;
  lastAt: number;
}

const MARK = '\n\nSince this draft: ';

/** The card's prompt with one closing sentence about later replies (replacing an earlier one). */
export function withLaterReplies(prompt: string, later: LaterReplies): string {
  const base = prompt.split(MARK)[0]!;
  const n = later.count === 1 ? '1 more reply' : `${later.count} more replies`;
  const last = new Date(later.lastAt).toISOString();
  return `${base}${MARK}${n} from ${later.from} arrived (the last at ${last}); read them before this ships.`;
}

/** The card's `detail` with `laterReplies` (its count and the last one's time), other keys kept. */
export function detailWithLaterReplies(detail: unknown, later: LaterReplies): Record<string, unknown> {
  const kept = detail && typeof detail === 'object' && !Array.isArray(detail) ? (detail as Record<string, unknown>) : {};
  return { ...kept, laterReplies: { count: later.count, lastAt: later.lastAt } };
}

/** Which of these turns made a card that still waits for a person (one query). */
export async function turnsWithWaitingCards(q: Queryable, accountId: string, turnIds: string[]): Promise<Set<string>> {
  if (!turnIds.length) return new Set();
  const rows: { turn_id: string }[] = await q('review_cards')
    .where({ account_id: accountId })
    .whereIn('turn_id', turnIds)
    .whereIn('status', WAITING)
    .distinct('turn_id');
  return new Set(rows.map((r) => r.turn_id));
}

/** Notes later replies on every waiting card the turn made; returns how many cards changed. */
export async function noteLaterReplies(q: Queryable, accountId: string, turnId: string, later: LaterReplies, at: number): Promise<number> {
  const cards = cardsRepository(q);
  const rows: { id: string; prompt: string; detail: unknown }[] = await q('review_cards')
    .where({ account_id: accountId, turn_id: turnId })
    .whereIn('status', WAITING)
    .select('id', 'prompt', 'detail');
  let changed = 0;
  for (const r of rows) {
    const done = await cards.transition(
      accountId,
      r.id,
      { statuses: WAITING },
      { prompt: withLaterReplies(r.prompt, later), detail: detailWithLaterReplies(r.detail, later) },
      at,
    );
    if (done) changed++;
  }
  return changed;
}
