import type { CardDecided, EventDeps, EventHandlers } from '../events/event-map.js';
import { THINGS, type Thing } from './experiment.js';
import { experimentsRepository } from './experiments.repository.js';
import { draftExperimentMail } from './experiments.service.js';
import { pausedExperiments } from './paused.js';
import { rawRatioCounts } from './ratio-mismatch.js';
import { kindOf } from './variants/registry.js';

/**
 * The experiments' follow-ups of `card.decided` (registered by the process that delivers events): a dismissed
 * proposal is dropped; an approved proposal of a kind with work of its own (an ad test, a post) files its one card at
 * once (not at the next pass); an approved winner is adopted by its kind (variants/registry.ts). Each is once: a second
 * run changes nothing.
 */
export function registerExperimentFollowUps(handlers: EventHandlers): void {
  handlers.on('card.decided', 'experiments', followDecision);
}

async function followDecision(deps: EventDeps, e: CardDecided): Promise<void> {
  const { accountId, payload } = e;
  const id = payload.experimentId;
  if (typeof id !== 'string') return;
  const approved = e.decision === 'approve';
  const repo = experimentsRepository(deps.db);
  // Conditional: only a proposal still proposed becomes dismissed.
  if (e.sourceType === 'experiment' && e.decision === 'dismiss') await repo.setStatus(accountId, id, ['proposed'], 'dismissed', e.at);
  // Files nothing unless the experiment runs and its card is not filed yet (a claim on the experiment's row).
  const thing = (THINGS as readonly unknown[]).includes(payload.thing) ? (payload.thing as Thing) : null;
  if (e.sourceType === 'experiment' && approved && thing && kindOf(thing).reaches !== 'contacts') {
    const x = await repo.get(accountId, id);
    if (x) await draftExperimentMail(deps.db, x, 1);
  }
  if (e.sourceType === 'experiment_winner' && approved) await adoptWinner(deps, accountId, id, payload.value, e.at);
  if (e.sourceType === 'experiment_mismatch') await actOnMismatch(deps, accountId, id, approved, e.at, payload.ratioAt);
}

/**
 * A person's answer to a paused experiment's ratio mismatch: approve resumes it (the check then reads only the counts
 * that come after, so the same shortfall does not pause it again); dismiss ends it with no winner.
 */
async function actOnMismatch(deps: EventDeps, accountId: string, id: string, resume: boolean, at: number, ratioAt: unknown): Promise<void> {
  const repo = experimentsRepository(deps.db);
  if (!resume) {
    await pausedExperiments(deps.db).endPaused(accountId, id, at);
    return;
  }
  const x = await repo.get(accountId, id);
  if (x?.status !== 'paused') return;
  // The counts the paused look read (on its card); a card without them: the counts now.
  const given = Array.isArray(ratioAt) && ratioAt.every((n) => typeof n === 'number') ? (ratioAt as number[]) : null;
  const now = given ?? rawRatioCounts(x, await repo.counts(x, at - deps.config.experiments.replyWindowMs)) ?? [];
  await pausedExperiments(deps.db).resume(accountId, id, now);
}

/** Adopts a winner once: the claim of the experiment's `adopted_at` and the default commit together. */
async function adoptWinner(deps: EventDeps, accountId: string, id: string, value: unknown, at: number): Promise<void> {
  const x = await experimentsRepository(deps.db).get(accountId, id);
  if (!x || typeof value !== 'string') return;
  // Each kind adopts its own way (a post title also retitles the published post), claiming the adoption once.
  await kindOf(x.thing).adopt(deps.db, x, value, at);
}
