import { addCard } from '../../src/review/cards/doors.js';
import type { Card, NewCard } from '../../src/review/cards/card.js';
import { applyLadder } from '../../src/review/ladder.service.js';
import type { ReviewRules } from '../../src/review/outside-data.js';
import type { ReviewDeps } from '../../src/review/review.types.js';

/**
 * A card as the queue would hold it once the card-timers sweep looked at it: it enters through `addCard`
 * and the trust ladder looks at it now (deadline and job set), instead of on the sweep's next run.
 */
export async function createCard(deps: ReviewDeps & ReviewRules, input: NewCard): Promise<Card> {
  const card = await addCard(deps.db, { ...input, ladderChecked: false });
  return (await applyLadder(deps, card)) ?? card;
}
