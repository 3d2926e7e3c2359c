import type { ChannelAdapter, Work } from '../channels/channel.types.js';
import { channelOf, shippedEvent } from '../channels/registry.js';
import { metrics } from '../metrics/registry.js';
import type { Db, Trx } from '../db.js';
import { mailReconcile } from '../jobs/shipments.js';
import { enqueue } from '../jobs/registry.js';
import { newId } from '../ids.js';
import type { DecidedBy } from '../results/channel-events.js';
import { recordChannelEvent } from '../results/channel-events.js';
import { cardsRepository, type Card, type CardChanges } from '../review/cards/cards.repository.js';
import { recordSendOutcome } from './lead-outcome.js';
import { fencesRepository, type Fence } from './fence.repository.js';
import type { ReviewDeps } from '../review/review.types.js';
import { clearSoftFailures } from './refusals.service.js';
import { startSequence, stepShipped } from './sequence-state.js';
import type { OnSent } from './hold-rule.js';
import { raiseTrust } from '../review/trust.service.js';

/**
 * Writes the fence of one piece of a claimed card's work (`step` 0, or a sequence's step), in the
 * caller's transaction, with whatever the adapter records beside it (`prepare`: mail's thread and
 * reply token), so the fence and what finds it again commit together or not at all. The fence's
 * details are the work's plus the adapter's, its body the adapter's when it gave one: ship
 * `{ ...work, body: fence.body, details: fence.details }`.
 */
export async function fenceWork(
  trx: Trx,
  adapter: ChannelAdapter,
  card: Pick<Card, 'accountId' | 'id'>,
  work: Work,
  o: { step: number; decidedBy: DecidedBy },
): Promise<Fence> {
  const id = newId('send');
  const at = Date.now();
  const fencing = { id, accountId: card.accountId, cardId: card.id, step: o.step, idempotencyKey: `mail-${id}`, at };
  const earlier = { increasesSince: (since: number) => fencesRepository(trx).increasesSince(card.accountId, work.kind, since) };
  const prepared = adapter.prepare ? await adapter.prepare(trx, fencing, work, earlier) : { details: {} };
  const { subject, kind } = work;
  return fencesRepository(trx).insert(
    {
      ...fencing,
      to: work.to ?? '',
      subject,
      body: prepared.body ?? work.body,
      details: { ...work.details, ...prepared.details },
      kindOfWork: kind,
      decidedBy: o.decidedBy,
    },
    at,
  );
}

/**
 * The card of a settled fence → sent, the work's channel event, and the lead it reached (details.leadId)
 * `contacted` unless it is past that, in the caller's transaction. `extra`
 * joins the resolution (`changed` for a send, `confirmedBy` for a person's answer). Null: the card had left
 * `sending` already, or the fence was a sequence's later step (its card went out with the first mail).
 */
export async function markShipped(
  trx: Trx,
  fence: Fence,
  at: number,
  extra: Record<string, unknown>,
  onSent: OnSent,
): Promise<Card | null> {
  let card: Card | null = null;
  // A sequence's later step: its card went out with the first mail (it is not `sending`); the sequence moves on.
  if (fence.step > 0) await stepShipped(trx, fence, at);
  else {
    const sequence = fence.kindOfWork === 'sequence' ? await startSequence(trx, fence, at) : {};
    card = await cardsRepository(trx).transition(
      fence.accountId,
      fence.cardId,
      { statuses: ['sending'] },
      {
        status: 'sent',
        resolvedAt: at,
        resolution: {
          action: fence.kindOfWork === 'email' ? 'send' : 'approve',
          by: fence.decidedBy,
          at,
          sendId: fence.id,
          to: fence.to,
          ...extra,
          ...sequence,
        },
      },
    );
  }
  // The handed on-sent hook (hold-rule.ts): an experiment's mail exposes its contact to the variant it was assigned.
  if (card) await onSent(trx, fence.accountId, card, at);
  const event = shippedEvent(fence.kindOfWork, fence.details);
  if (event) await recordChannelEvent(trx, fence.accountId, { ...event, at, decidedBy: fence.decidedBy, refId: fence.id });
  await recordSendOutcome(trx, fence, { status: 'contacted' }, at);
  return card;
}

/** Fence → sent and card → sent, once: records the channel event and (for a person's unchanged send) trust. */
export async function settleSent(
  db: Db,
  fence: Fence,
  providerId: string | null,
  o: { unchanged: boolean; onSent: OnSent },
): Promise<boolean> {
  const settled = await db.transaction(async (trx) => {
    const at = Date.now();
    const settled = await fencesRepository(trx).transition(fence.accountId, fence.id, ['sending', 'pending', 'unknown'], {
      status: 'sent',
      providerId,
      settledAt: at,
    });
    if (!settled) return false;
    await clearSoftFailures(trx, fence.accountId, fence.to);
    const card = await markShipped(trx, fence, at, { changed: !o.unchanged }, o.onSent);
    if (card && fence.decidedBy === 'person' && o.unchanged && card.kindOfWork) await raiseTrust(trx, fence.accountId, card.kindOfWork, at);
    return true;
  });
  if (settled) metrics.sends.inc({ channel: channelOf(fence.kindOfWork), outcome: 'sent' });
  return settled;
}

/** Nothing was sent: the fence is void and the card pending again (with `cardChanges`), in one transaction. */
export async function releaseFence(db: Db, fence: Fence, reason: string, cardChanges: CardChanges = {}): Promise<void> {
  const released = await db.transaction(async (trx) => {
    const released = await fencesRepository(trx).transition(fence.accountId, fence.id, ['sending', 'pending', 'unknown'], {
      status: 'not_sent',
      lastError: reason,
      settledAt: Date.now(),
    });
    // A sequence's later step leaves its card as it is (sent with the first mail); the sweep queues the step again.
    if (released && fence.step === 0)
      await cardsRepository(trx).transition(
        fence.accountId,
        fence.cardId,
        { statuses: ['sending'] },
        { ...cardChanges, status: 'pending' },
      );
    return released;
  });
  if (released) metrics.sends.inc({ channel: channelOf(fence.kindOfWork), outcome: 'not_sent' });
}

/** The answer was lost: the fence waits for reconciliation, which is queued now (the sweep is the backstop). */
export async function markPending(deps: ReviewDeps, adapter: ChannelAdapter, fence: Fence, reason: string): Promise<void> {
  const now = Date.now();
  const moved = await fencesRepository(deps.db).transition(fence.accountId, fence.id, ['sending'], {
    status: 'pending',
    lastError: reason,
    reconcileUntil: now + adapter.timings.reconcileWindowMs,
  });
  if (moved) metrics.sends.inc({ channel: channelOf(fence.kindOfWork), outcome: 'answer_lost' });
  await scheduleReconcile(deps, fence, 1, adapter.timings.reconcileDelayMs);
}

/** Queues the `mail.reconcile` job (its name kept from when only mail shipped: queued jobs keep working). */
export async function scheduleReconcile(deps: ReviewDeps, fence: Fence, attempt: number, delay: number): Promise<void> {
  try {
    await enqueue(deps.queues, mailReconcile, { accountId: fence.accountId, sendId: fence.id }, { attempt, delay });
  } catch (err) {
    deps.logger.warn({ sendId: fence.id, err: (err as Error).message }, 'reconciliation not queued; the mail sweep will pick it up');
  }
}
