import { cardAutoResolve } from '../jobs/card-auto-resolve.job.js';
import { enqueue, type JobDef } from '../jobs/registry.js';
import { cardsRepository, type Card, type NewCard } from './cards/cards.repository.js';
import { cardFromOutsideData } from './outside-data.js';
import type { ReviewDeps } from './review.types.js';
import { planAutoResolve } from './trust.service.js';
import type { z } from 'zod';

// How a card enters the queue (created, then one look from the trust ladder) and the card timer jobs
// queued after commit (the person's verbs in review.service.ts queue them too).

/** After commit: a timer job. A failed enqueue is logged; the card-timers sweep does the work later. */
export async function schedule<P extends z.ZodType>(deps: ReviewDeps, job: JobDef<P>, payload: z.input<P>, at: number): Promise<void> {
  try {
    await enqueue(deps.queues, job, payload, { delay: Math.max(0, at - Date.now()) });
  } catch (err) {
    deps.logger.warn({ job: job.name, payload, err: (err as Error).message }, 'card timer not queued; the card sweep will act on time');
  }
}

/** The trust ladder's timer for a card at `at` (its job id names both, so each deadline is queued once). */
export function scheduleAutoResolve(deps: ReviewDeps, accountId: string, cardId: string, at: number): Promise<void> {
  return schedule(deps, cardAutoResolve, { accountId, cardId, at }, at);
}

const detailOf = (c: Card): Record<string, unknown> =>
  c.detail && typeof c.detail === 'object' ? { ...(c.detail as Record<string, unknown>) } : {};
export const withoutAutoResolve = (c: Card) => {
  const d = detailOf(c);
  delete d.autoResolve;
  return Object.keys(d).length ? d : null;
};

/** Inserts a card and lets the trust ladder look at it (the way every card should enter the queue). */
export async function createCard(deps: ReviewDeps, input: NewCard): Promise<Card> {
  const card = await cardsRepository(deps.db).insert({ ...input, ladderChecked: false });
  return (await applyLadder(deps, card)) ?? card;
}

/**
 * The ladder's one look at a new card: past the threshold it gets `autoResolveAt` and a detail saying
 * why and when, and a delayed job. Guarded by `ladder_checked`, so the sweep and the creator never
 * both schedule it.
 */
export async function applyLadder(deps: ReviewDeps, input: Card): Promise<Card | null> {
  const card = { ...input, fromOutside: await cardFromOutsideData(deps.db, input) };
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
