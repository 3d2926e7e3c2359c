import type { Queryable } from '../db.js';

/**
 * What a card's turn was, as the agent keeps its turns (src/agent/core/doors.ts `turnReading`), or null for no such
 * turn. Review stands below the agent, so it is handed this: by the composition roots (the API's app, the worker
 * pools, the test helpers that build either: `ReviewRules`) and by the agent when it files work (`shipBySetting`).
 */
export type TurnReading = (
  q: Queryable,
  accountId: string,
  turnId: string,
) => Promise<{ kind: string; origin: string; data: unknown } | null>;

/** What the composition roots hand review: how it reads a card's turn. */
export interface ReviewRules {
  readTurn: TurnReading;
}

/**
 * "Outside data is data" (docs/rules.md), decided in one place: a turn works on outside data when a webhook started it (an
 * `event` turn, or any turn of `hook` origin) or when it carries a data block (a payload, research, or
 * the card a revision rewrites, whose text may have come from outside). What such a turn makes never
 * ships by itself: no trust-ladder deadline, no run-without-approval setting; a person decides.
 */
export function turnCarriesOutsideData(turn: { kind: string; origin: string; data: unknown }): boolean {
  return turn.kind === 'event' || turn.origin === 'hook' || (turn.data !== null && turn.data !== undefined);
}

/** Whether a card arose from outside data: marked so when made, or made during such a turn (read by the handed `readTurn`). */
export async function cardFromOutsideData(
  q: Queryable,
  card: { accountId: string; turnId?: string | null; fromOutside?: boolean },
  readTurn: TurnReading,
): Promise<boolean> {
  if (card.fromOutside) return true;
  if (!card.turnId) return false;
  const turn = await readTurn(q, card.accountId, card.turnId);
  return turn !== null && turnCarriesOutsideData(turn);
}
