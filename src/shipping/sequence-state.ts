import type { Queryable, Trx } from '../db.js';
import { enqueue } from '../jobs/registry.js';
import { sequenceStep, type StepKey } from '../jobs/shipments.js';
import { sequenceStepsOf } from '../mail/sequence-steps.js';
import { sequenceIdFor, sequencesRepository, type SequenceMatch } from '../mail/sequences.repository.js';
import { cardsRepository } from '../review/cards/cards.repository.js';
import type { ReviewDeps } from '../review/review.types.js';
import type { Fence } from './fence.repository.js';

// A sequence's state: started, advanced and stopped in the transactions that settle its mail, said on its
// card, and its next step's job queued (the runner that ships the later steps is sequence-runner.ts).

type SequenceState = 'running' | 'finished' | 'stopped';

/** Says on a sent sequence card whether its follow-ups still run (its verbs follow: card-shape.ts). */
async function markCard(trx: Queryable, accountId: string, cardId: string, state: SequenceState, reason?: string): Promise<void> {
  const cards = cardsRepository(trx);
  const card = await cards.find(accountId, cardId);
  if (card?.status !== 'sent') return;
  const resolution = {
    ...(card.resolution as Record<string, unknown>),
    sequence: state,
    ...(reason ? { sequenceStopReason: reason } : {}),
  };
  await cards.transition(accountId, cardId, { statuses: ['sent'] }, { status: 'sent', resolution });
}

/**
 * In the transaction that settles a sequence's first mail as sent: the sequence starts (its next step
 * due after its delay), and says so in the card's resolution. Returns what the resolution gains.
 */
export async function startSequence(trx: Trx, fence: Fence, at: number): Promise<Record<string, unknown>> {
  const card = await cardsRepository(trx).find(fence.accountId, fence.cardId);
  if (!card) return {};
  const leadId = typeof fence.details.leadId === 'string' ? fence.details.leadId : null;
  const seq = await sequencesRepository(trx).start(
    { id: sequenceIdFor(card.id), accountId: card.accountId, cardId: card.id, leadId, to: fence.to, steps: sequenceStepsOf(card) },
    at,
  );
  return { sequenceId: seq.id, sequence: seq.status === 'active' ? 'running' : seq.status };
}

/** In the transaction that settles a later step as sent: the next step is due after its delay, or the sequence is done. */
export async function stepShipped(trx: Trx, fence: Fence, at: number): Promise<void> {
  const repo = sequencesRepository(trx);
  const seq = await repo.byCard(fence.accountId, fence.cardId);
  if (!seq) return;
  const moved = await repo.advance(seq, fence.step, at);
  if (moved?.status === 'finished') await markCard(trx, seq.accountId, seq.cardId, 'finished');
}

/**
 * Stops the active sequences that match (a sequence, the recipient's address, the lead), in the caller's
 * transaction: their later steps ship nothing, and their cards say why. Returns how many stopped.
 */
export async function stopSequences(
  trx: Queryable,
  accountId: string,
  match: { id?: string; to?: string; leadId?: string | null },
  reason: string,
  at: number,
): Promise<number> {
  return (await stopSequencesMany(trx, [{ ...match, accountId, reason }], at))[0]!;
}

/** `stopSequences` for many matches in one statement; how many stopped, per match. */
export async function stopSequencesMany(trx: Queryable, matches: SequenceMatch[], at: number): Promise<number[]> {
  const stopped = await sequencesRepository(trx).stop(matches, at);
  const counts = matches.map(() => 0);
  for (const s of stopped) {
    counts[s.match]!++;
    const m = matches[s.match]!;
    await markCard(trx, m.accountId, s.cardId, 'stopped', m.reason);
  }
  return counts;
}

/** Queues the job of a sequence's next step for when it is due (after commit; the sweep is the backstop). */
export async function queueNextStep(deps: ReviewDeps, accountId: string, cardId: string, key: StepKey = { by: 'due' }): Promise<void> {
  const seq = await sequencesRepository(deps.db).byCard(accountId, cardId);
  if (seq?.status !== 'active' || seq.nextAt === null) return;
  const payload = { accountId, sequenceId: seq.id, step: seq.nextStep };
  try {
    await enqueue(deps.queues, sequenceStep, payload, { ...key, delay: Math.max(0, seq.nextAt - Date.now()) });
  } catch (err) {
    deps.logger.warn({ sequenceId: seq.id, err: (err as Error).message }, 'sequence step not queued; the mail sweep will queue it');
  }
}
