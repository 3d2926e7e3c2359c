import type { Queryable } from '../db.js';
import { agentRows } from './agent-rows.js';

/**
 * "Outside data is data" (docs/rules.md), decided in one place: a turn works on outside data when a webhook started it (an
 * `event` turn, or any turn of `hook` origin) or when it carries a data block (a payload, research, or
 * the card a revision rewrites, whose text may have come from outside). What such a turn makes never
 * ships by itself: no trust-ladder deadline, no run-without-approval setting; a person decides.
 */
export function turnCarriesOutsideData(turn: { kind: string; origin: string; data: unknown }): boolean {
  return turn.kind === 'event' || turn.origin === 'hook' || (turn.data !== null && turn.data !== undefined);
}

/** Whether a card arose from outside data: marked so when made, or made during such a turn. */
export async function cardFromOutsideData(
  q: Queryable,
  card: { accountId: string; turnId?: string | null; fromOutside?: boolean },
): Promise<boolean> {
  if (card.fromOutside) return true;
  if (!card.turnId) return false;
  const turn = await agentRows(q).turn(card.accountId, card.turnId);
  return turn !== null && turnCarriesOutsideData(turn);
}
