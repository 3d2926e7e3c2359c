import { isBlocked } from '../blocklist/blocklist.service.js';
import type { Work } from '../channels/channel.types.js';
import type { Queryable } from '../db.js';
import { MailNotSettled, Rejected } from '../errors.js';
import { sequencesRepository, type Sequence } from '../mail/sequences.repository.js';
import { threadsRepository } from '../mail/threads.repository.js';
import { cardsRepository } from '../review/cards/cards.repository.js';
import { privateTextIn } from '../review/cards/private-text.js';
import { fencesRepository } from './fence.repository.js';
import { fenceWork } from './fence.service.js';
import { queueNextStep, stopSequences } from './sequence-state.js';
import { adapterForCard, shipFenced } from './ship-card.service.js';
import type { ShipDeps } from './hold-rule.js';

// The sequence runner: ships a running sequence's later steps, each through its own fence (its state,
// started, advanced and stopped in the transactions that settle its mail, is in sequence-state.ts).

/** A step certainly not shipped this many times (the service refusing or unreachable) stops its sequence. */
export const MAX_STEP_TRIES = 5;

export type StepOutcome = 'shipped' | 'not_due' | 'not_active' | 'stopped' | 'in_flight';

/**
 * Ships step `step` of a sequence if it is still the next one and the sequence is active: checked again
 * under the sequence's row lock when the step's fence is written (one live fence per card and step), so
 * racing jobs, a retry or the sweep ship it once. A refusal for good, a blocked address, private text
 * or too many failed tries stop the sequence; a service that cannot be reached throws (the job retries).
 */
export async function shipSequenceStep(deps: ShipDeps, accountId: string, sequenceId: string, step: number): Promise<StepOutcome> {
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
export async function sweepSequences(deps: ShipDeps, bucket: number): Promise<number> {
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
