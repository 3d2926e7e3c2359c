import type { ChannelAdapter, Lookup } from '../channels/channel.types.js';
import { adapterFor } from '../channels/registry.js';
import type { Db, Trx } from '../db.js';
import { newId } from '../ids.js';
import { DELIVERY_QUESTION_SOURCE } from '../review/cards/card-shape.js';
import { cardsRepository } from '../review/cards/cards.repository.js';
import { addCard } from '../review/cards/doors.js';
import { deliveryQuestion } from './delivery-question.js';
import { fencesRepository, type Fence } from './fence.repository.js';
import { markShipped, scheduleReconcile, settleSent } from './fence.service.js';
import { recordKnownOutcome } from './record-outcome.js';
import type { OnSent, ShipDeps } from './hold-rule.js';

/**
 * Settles one fence whose answer was lost. Asks the fence's adapter; where it cannot tell and the
 * service does not deduplicate, it waits and asks again until the window closes, then hands the
 * question to a person as a card. It never ships again without an idempotency key the service honours.
 */
export async function reconcileSend(deps: ShipDeps, accountId: string, sendId: string): Promise<'settled' | 'waiting' | 'asked' | 'noop'> {
  const repo = fencesRepository(deps.db);
  let fence = await repo.find(accountId, sendId);
  if (!fence) return 'noop';
  // An adapter gone since it shipped (none today) cannot be asked: the window runs out and a person decides.
  const adapter = adapterFor(deps.config, deps.db, fence.kindOfWork);
  const timings = adapter?.timings ?? {
    reconcileWindowMs: deps.config.mail.reconcileWindowMs,
    reconcileDelayMs: deps.config.mail.reconcileDelayMs,
  };
  const now = Date.now();
  if (fence.status === 'sending') {
    // A sender that died between fence and answer: its answer is lost too.
    fence = await repo.transition(accountId, sendId, ['sending'], { status: 'pending', reconcileUntil: now + timings.reconcileWindowMs });
    if (!fence) return 'noop';
  }
  if (fence.status !== 'pending') return 'noop';
  const card = await cardsRepository(deps.db).find(accountId, fence.cardId);
  const unchanged = !card || card.version === 1;
  const unknown: Lookup = { state: 'unknown' };
  const found = adapter
    ? await adapter.lookup(fence.idempotencyKey, { accountId: fence.accountId, details: fence.details }).catch(() => unknown)
    : unknown;
  const open = fence;
  const settle = (providerId: string) =>
    recordKnownOutcome(deps.logger, open.id, 'sent', () => settleSent(deps.db, open, providerId, { unchanged, onSent: deps.onSent }));
  if (found.state === 'sent') {
    await settle(found.providerId);
    return 'settled';
  }
  if (found.state === 'not_found' && adapter?.canReship) {
    // A failed resend leaves it unsettled; the same key keeps the next try safe.
    const work = { kind: adapter.kind, to: fence.to, subject: fence.subject, body: fence.body, details: fence.details };
    const accepted = await adapter.ship(work, fence.idempotencyKey).catch(() => null);
    if (accepted) {
      await settle(accepted.providerId);
      return 'settled';
    }
  }
  const attempts = fence.attempts + 1;
  if (fence.reconcileUntil !== null && now >= fence.reconcileUntil) {
    await askPerson(deps.db, fence, adapter);
    return 'asked';
  }
  await repo.transition(accountId, sendId, ['pending'], { attempts });
  const left = Math.max(0, (fence.reconcileUntil ?? now) - now);
  const delay = Math.min(timings.reconcileDelayMs * 2 ** Math.min(attempts, 10), left);
  await scheduleReconcile(deps, fence, attempts + 1, delay);
  return 'waiting';
}

/** Past the window with no answer: the fence waits for a person, through an urgent choice card worded for its kind of work. */
async function askPerson(db: Db, fence: Fence, adapter: ChannelAdapter | null): Promise<void> {
  const noun = adapter?.noun ?? fence.kindOfWork.replace(/_/g, ' ');
  const service = adapter?.service ?? 'the service';
  const question = deliveryQuestion(fence.kindOfWork, fence, { noun, service });
  await db.transaction(async (trx) => {
    const questionId = newId('card');
    const moved = await fencesRepository(trx).transition(fence.accountId, fence.id, ['pending'], {
      status: 'unknown',
      questionCardId: questionId,
    });
    if (!moved) return;
    await addCard(trx, {
      id: questionId,
      accountId: fence.accountId,
      kind: 'choice',
      sourceType: DELIVERY_QUESTION_SOURCE,
      title: question.title,
      prompt: question.prompt,
      summary: fence.subject,
      priority: 'urgent',
      options: question.options,
      payload: { sendId: fence.id, cardId: fence.cardId, to: fence.to, subject: fence.subject, fencedAt: fence.createdAt },
      actions: ['choose'],
      primaryLabel: 'Confirm delivery',
      ladderChecked: true,
    });
  });
}

/** A person's answer to a delivery question: mark the work sent, or void the fence so it can be sent again. */
export async function settleByPerson(trx: Trx, accountId: string, sendId: string, value: string, onSent: OnSent): Promise<void> {
  const fence = await fencesRepository(trx).find(accountId, sendId);
  if (fence?.status !== 'unknown') return;
  const at = Date.now();
  if (value === 'mark_sent') {
    await fencesRepository(trx).transition(accountId, sendId, ['unknown'], { status: 'sent', settledAt: at });
    await markShipped(trx, fence, at, { confirmedBy: 'person' }, onSent);
    return;
  }
  await fencesRepository(trx).transition(accountId, sendId, ['unknown'], {
    status: 'not_sent',
    settledAt: at,
    lastError: 'a person said it did not arrive',
  });
  if (fence.step === 0) await cardsRepository(trx).transition(accountId, fence.cardId, { statuses: ['sending'] }, { status: 'pending' });
}

/** The shipping sweep (`mail.sweep`): reconciles fences no job is working on (stale `sending`, `pending` without a job). */
export async function sweepSends(deps: ShipDeps): Promise<number> {
  const stale = Date.now() - 2 * deps.config.mail.sendTimeoutMs;
  const fences = await fencesRepository(deps.db).unsettled(stale, 100);
  let n = 0;
  for (const f of fences) {
    if (f.status === 'pending' && f.updatedAt > stale) continue;
    await reconcileSend(deps, f.accountId, f.id).catch((err) =>
      deps.logger.warn({ sendId: f.id, err: (err as Error).message }, 'reconcile failed'),
    );
    n++;
  }
  return n;
}
