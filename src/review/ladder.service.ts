import { cardsRepository } from './cards/cards.repository.js';
import type { Card } from './cards/card.js';
import { cardFromOutsideData, type ReviewRules } from './outside-data.js';
import type { ReviewDeps } from './review.types.js';
import { scheduleAutoResolve } from './timer-jobs.js';
import { planAutoResolve } from './trust.service.js';

// The trust ladder's look at a card that entered the queue (src/review/cards/doors.ts, `addCard`): the
// card-timers sweep gives it to every card not yet checked.

const detailOf = (c: Card): Record<string, unknown> =>
  c.detail && typeof c.detail === 'object' ? { ...(c.detail as Record<string, unknown>) } : {};

/** The card's detail without the ladder's plan (a person's verb cancelled the deadline), or null when nothing is left. */
export const withoutAutoResolve = (c: Card) => {
  const d = detailOf(c);
  delete d.autoResolve;
  return Object.keys(d).length ? d : null;
};

/**
 * The ladder's one look at a new card: past the threshold it gets `autoResolveAt` and a detail saying
 * why and when, and a delayed job. Guarded by `ladder_checked`, so the sweep and any other caller never
 * both schedule it.
 */
export async function applyLadder(deps: ReviewDeps & ReviewRules, input: Card): Promise<Card | null> {
  const card = { ...input, fromOutside: await cardFromOutsideData(deps.db, input, deps.readTurn) };
  const plan = await planAutoResolve(deps.db, deps.config, card);
  const base = { ladderChecked: true, fromOutside: card.fromOutside };
  const changes = plan ? { ...base, autoResolveAt: plan.at, detail: { ...detailOf(card), ...plan.detail } } : base;
  const updated = await cardsRepository(deps.db).transition(
    card.accountId,
    card.id,
    { statuses: ['pending'], ladderChecked: false },
    changes,
  );
  if (updated && plan) {
    await scheduleAutoResolve(deps, card.accountId, card.id, plan.at);
  }
  return updated;
}
