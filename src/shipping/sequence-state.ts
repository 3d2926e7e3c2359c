import { isBlocked } from '../blocklist/blocklist.service.js';
import type { Work } from '../channels/channel.types.js';
import type { Queryable, Trx } from '../db.js';
import { MailNotSettled, Rejected } from '../errors.js';
import { enqueue } from '../jobs/registry.js';
import { sequenceStep, type StepKey } from '../jobs/sequence-step.job.js';
import { sequenceStepsOf } from '../mail/sequence-steps.js';
import { sequenceIdFor, sequencesRepository, type Sequence, type SequenceMatch } from '../mail/sequences.repository.js';
import { threadsRepository } from '../mail/threads.repository.js';
import { cardsRepository } from '../review/cards/cards.repository.js';
import { fencesRepository, type Fence } from './fence.repository.js';
import { fenceWork } from './fence.service.js';
import { privateTextIn } from '../review/cards/private-text.js';
import type { ReviewDeps } from '../review/review.types.js';
import { adapterForCard, shipFenced } from './ship-card.service.js';

/** A step certainly not shipped this many times (the service refusing or unreachable) stops its sequence. */
export const MAX_STEP_TRIES = 5;

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

export type StepOutcome = 'shipped' | 'not_due' | 'not_active' | 'stopped' | 'in_flight';

/**
 * Ships step `step` of a sequence if it is still the next one and the sequence is active: checked again
 * under the sequence's row lock when the step's fence is written (one live fence per card and step), so
 * racing jobs, a retry or the sweep ship it once. A refusal for good, a blocked address, private text
 * or too many failed tries stop the sequence; a service that cannot be reached throws (the job retries).
 */
export async function shipSequenceStep(deps: ReviewDeps, accountId: string, sequenceId: string, step: number): Promise<StepOutcome> {
  const { db } = deps;
  const seq = await sequencesRepository(db).find(accountId, sequenceId);
  if (seq?.status !== 'active' || seq.nextStep !== step) return 'not_active';
  if (seq.nextAt !== null && seq.nextAt > Date.now() + 1_000) {
    // Early (its delay cut short, clocks apart): again for its due time, under a fresh id (ours is still held).
    await queueNextStep(deps, accountId, seq.cardId, { by: 'early', at: Date.now() });
    return 'not_due';
  }
  const stop = async (reason: string) => {
    await db.transaction((trx) => stopSequences(trx, accountId, { id: seq.id }, reason, Date.now()));
    return 'stopped' as const;
  };
  if ((await fencesRepository(db).voidCount(accountId, seq.cardId, step)) >= MAX_STEP_TRIES) {
    return stop(`step ${step} could not be sent after ${MAX_STEP_TRIES} tries`);
  }
  if (await isBlocked(db, accountId, seq.to)) return stop(`${seq.to} is on the block list`);
  const work = await stepWork(db, seq, step);
  if (await privateTextIn(db, accountId, [work.subject, work.body])) return stop(`step ${step} quotes the account's private notes`);
  const card = await cardsRepository(db).find(accountId, seq.cardId);
  if (!card) return 'not_active';
  const adapter = await adapterForCard(deps, card);
  const first = await fencesRepository(db).liveForCard(accountId, seq.cardId, 0);

  const fence = await db.transaction(async (trx) => {
    const now = await sequencesRepository(trx).find(accountId, sequenceId, true);
    if (now?.status !== 'active' || now.nextStep !== step) return null;
    if (await fencesRepository(trx).liveForCard(accountId, seq.cardId, step)) return null;
    return fenceWork(trx, adapter, card, work, { step, decidedBy: first?.decidedBy ?? 'person' });
  });
  if (!fence) return 'in_flight';
  try {
    await shipFenced(deps, adapter, fence, work, { unchanged: false });
  } catch (err) {
    if (err instanceof Rejected) return stop(`step ${step}: ${err.message}`);
    // Its answer was lost: reconciliation settles the step (and the sweep queues the next).
    if (err instanceof MailNotSettled && err.error === 'delivery_pending') return 'in_flight';
    throw err;
  }
  await queueNextStep(deps, accountId, seq.cardId);
  return 'shipped';
}

/** A later step's work: its subject and body, in the first mail's thread (In-Reply-To its Message-ID). */
async function stepWork(q: Queryable, seq: Sequence, step: number): Promise<Work> {
  const s = seq.steps[step]!;
  const first = await threadsRepository(q).ofCardStep(seq.accountId, seq.cardId, 0);
  return { kind: 'sequence', to: seq.to, subject: s.subject, body: s.body, details: first ? { inReplyTo: first.messageId } : {} };
}

/**
 * The sequence part of the shipping sweep: an active sequence whose step is overdue and has no live
 * fence gets its job again (keyed by the sweep's time bucket, so at most one per bucket).
 */
export async function sweepSequences(deps: ReviewDeps, bucket: number): Promise<number> {
  const grace = deps.config.mail.sweepEveryMs;
  const overdue = await sequencesRepository(deps.db).overdue(Date.now() - grace, 100);
  let n = 0;
  for (const seq of overdue) {
    if (await fencesRepository(deps.db).liveForCard(seq.accountId, seq.cardId, seq.nextStep)) continue;
    await queueNextStep(deps, seq.accountId, seq.cardId, { by: 'sweep', bucket });
    n++;
  }
  return n;
}
