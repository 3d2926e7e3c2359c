import { auditedWrite, type Actor } from '../audit/audit.service.js';
import { isBlocked } from '../blocklist/blocklist.service.js';
import type { Db, Queryable, Trx } from '../db.js';
import { BadRequest, InvalidAction, MailNotSettled, NotFound, Rejected } from '../errors.js';
import { newId } from '../ids.js';
import { mailReconcile } from '../jobs/mail-reconcile.job.js';
import { enqueue } from '../jobs/registry.js';
import { recordChannelEvent, type DecidedBy } from '../results/channel-events.js';
import { DELIVERY_OPTIONS, DELIVERY_QUESTION_SOURCE, isMailCard, mailDraftOf } from '../review/card-shape.js';
import { cardsRepository, type Card, type CardChanges } from '../review/cards.repository.js';
import type { ReviewDeps } from '../review/review.types.js';
import { privateTextIn } from '../review/private-text.js';
import { raiseTrust } from '../review/trust.service.js';
import { mailSendsRepository, type MailSend } from './mail-sends.repository.js';
import { AnswerLost, NotSent, type Accepted } from './mail.types.js';
import { recordKnownOutcome } from './record-outcome.js';
import { transportFor } from './transports.js';

export interface SendResult {
  ok: true;
  sendId: string;
  status: 'sent';
  to: string;
  providerId: string | null;
  decidedBy: DecidedBy;
}

class LostRace extends Error {}

/** Why a card cannot be sent now: the spec's 409s, or 503 while an earlier send awaits reconciliation. */
async function refusal(q: Queryable, card: Card, retryAfter: number): Promise<Error> {
  if (card.status === 'sent') return new Rejected('this mail was already sent; it is never sent twice');
  if (card.status === 'sending') {
    const fence = await mailSendsRepository(q).liveForCard(card.accountId, card.id);
    if (fence && (fence.status === 'pending' || fence.status === 'unknown')) {
      return new MailNotSettled('delivery_pending', 'the mail service has not confirmed delivery yet; retry this same send later', retryAfter);
    }
  }
  return new InvalidAction(card.actions);
}

async function inTransaction<T>(db: Db, actor: Actor | null, targetId: string, fn: (trx: Trx) => Promise<T>): Promise<T> {
  if (!actor) return db.transaction(fn);
  return auditedWrite(db, actor, async (trx) => ({ result: await fn(trx), targetId }));
}

/**
 * Sends a mail card once. The card is claimed (pending → sending) and the fence row written in one
 * transaction before the provider is called, so of any number of concurrent callers exactly one
 * reaches the provider; the others get 409 (or 503 `delivery_pending` while a lost answer is being
 * reconciled). `guard.autoResolveAt` makes the trust ladder's send lose to anything a person did first.
 */
export async function sendCard(
  deps: ReviewDeps,
  actor: Actor | null,
  accountId: string,
  cardId: string,
  opts: {
    body?: string;
    decidedBy: DecidedBy;
    autoResolveAt?: number;
    /**
     * What else the card gets, in the same transaction, when the provider certainly did not take the
     * message and the card goes back to `pending` (`sentence` is the refusal's wording). The trust
     * ladder sets its next try or its note here, so no reader sees the card in between.
     */
    whenNotSent?: (permanent: boolean, sentence: string) => CardChanges;
  },
): Promise<SendResult> {
  const { db, config } = deps;
  const retryAfter = config.mail.retryAfterSeconds;
  const card = await cardsRepository(db).find(accountId, cardId);
  if (!card) throw new NotFound();
  if (!isMailCard(card)) throw new InvalidAction(card.actions);
  if (opts.body !== undefined && card.sourceType === 'mail_draft') {
    throw new BadRequest('body is only for mail replies; a mail_draft always sends the reviewed copy');
  }
  if (!card.actions.includes('send')) throw await refusal(db, card, retryAfter);
  const draft = mailDraftOf(card);
  if (!draft.to) throw new Rejected('this card names no recipient; request changes so the agent adds one');
  const to = draft.to;
  const body = opts.body ?? draft.body;
  // A body the person typed into this request is their own words; everything else the agent wrote.
  const quotes = await privateTextIn(db, accountId, opts.body === undefined ? [draft.subject, body] : [draft.subject]);
  if (quotes) throw new Rejected(`this mail ${quotes}; nothing was sent: request changes so the agent rewrites it`);

  let fence: MailSend;
  try {
    fence = await inTransaction(db, actor, cardId, async (trx) => {
      if (await isBlocked(trx, accountId, to)) throw new Rejected(`${to} is on the block list; nothing was sent`);
      const guard = { statuses: ['pending', 'snoozed'], version: card.version, ...(opts.autoResolveAt !== undefined ? { autoResolveAt: opts.autoResolveAt } : {}) };
      const claimed = await cardsRepository(trx).transition(accountId, cardId, guard, { status: 'sending', autoResolveAt: null, snoozedUntil: null });
      if (!claimed) throw new LostRace();
      const id = newId('send');
      return mailSendsRepository(trx).insert(
        { id, accountId, cardId, idempotencyKey: `mail-${id}`, to, subject: draft.subject, body, decidedBy: opts.decidedBy },
        Date.now(),
      );
    });
  } catch (err) {
    if (!(err instanceof LostRace)) throw err;
    const now = await cardsRepository(db).find(accountId, cardId);
    throw now ? await refusal(db, now, retryAfter) : new NotFound();
  }

  const changed = opts.body !== undefined && opts.body !== draft.body;
  let accepted: Accepted;
  try {
    accepted = await transportFor(config).send({ from: config.mail.from, to, subject: draft.subject, text: body, inReplyTo: draft.inReplyTo }, fence.idempotencyKey);
  } catch (err) {
    if (err instanceof NotSent) {
      const sentence = err.permanent ? `the mail service refused the message: ${err.message}` : 'the mail service could not be reached; nothing was sent';
      await recordKnownOutcome(deps.logger, fence.id, 'not_sent', () => releaseFence(db, fence, err.message, opts.whenNotSent?.(err.permanent, sentence)));
      if (err.permanent) throw new Rejected(sentence);
      throw new MailNotSettled('unavailable', `${sentence}; retry this same send`, retryAfter);
    }
    await markPending(deps, fence, err instanceof AnswerLost ? err.message : `send failed mid-way: ${(err as Error).message}`);
    throw new MailNotSettled('delivery_pending', ANSWER_LOST, retryAfter);
  }
  try {
    await recordKnownOutcome(deps.logger, fence.id, 'sent', () => settleSent(db, fence, accepted.providerId, { unchanged: !changed && card.version === 1 }));
  } catch (err) {
    // Out of tries: the fence stays `sending` (or becomes `pending`), and reconciliation or the mail sweep settles it.
    deps.logger.error({ sendId: fence.id, err: (err as Error).message }, 'the mail service took a message but its outcome could not be recorded; handed to reconciliation');
    await markPending(deps, fence, `accepted as ${accepted.providerId} but not recorded: ${(err as Error).message}`).catch(() => undefined);
    throw new MailNotSettled('delivery_pending', 'the mail service took the message but its delivery could not be recorded yet; it is being confirmed, so retry this same send later', retryAfter);
  }
  return { ok: true, sendId: fence.id, status: 'sent', to, providerId: accepted.providerId, decidedBy: opts.decidedBy };
}

const ANSWER_LOST = 'the mail service took the message but its answer was lost; delivery is being confirmed, so retry this same send later';

/** Fence → sent and card → sent, once: records the channel event and (for a person's unchanged send) trust. */
export async function settleSent(db: Db, fence: MailSend, providerId: string | null, o: { unchanged: boolean }): Promise<boolean> {
  return db.transaction(async (trx) => {
    const at = Date.now();
    const settled = await mailSendsRepository(trx).transition(fence.accountId, fence.id, ['sending', 'pending', 'unknown'], {
      status: 'sent',
      providerId,
      settledAt: at,
    });
    if (!settled) return false;
    const card = await cardsRepository(trx).transition(fence.accountId, fence.cardId, { statuses: ['sending'] }, {
      status: 'sent',
      resolvedAt: at,
      resolution: { action: 'send', by: fence.decidedBy, at, sendId: fence.id, to: fence.to, changed: !o.unchanged },
    });
    await recordChannelEvent(trx, fence.accountId, { channel: 'email', type: 'sent', at, decidedBy: fence.decidedBy, refId: fence.id });
    if (card && fence.decidedBy === 'person' && o.unchanged && card.kindOfWork) await raiseTrust(trx, fence.accountId, card.kindOfWork, at);
    return true;
  });
}

/** The provider never took it: the fence is void and the card is back in the queue. */
async function releaseFence(db: Db, fence: MailSend, reason: string, cardChanges: CardChanges = {}): Promise<void> {
  await db.transaction(async (trx) => {
    const released = await mailSendsRepository(trx).transition(fence.accountId, fence.id, ['sending', 'pending', 'unknown'], {
      status: 'not_sent',
      lastError: reason,
      settledAt: Date.now(),
    });
    if (released) await cardsRepository(trx).transition(fence.accountId, fence.cardId, { statuses: ['sending'] }, { ...cardChanges, status: 'pending' });
  });
}

async function markPending(deps: ReviewDeps, fence: MailSend, reason: string): Promise<void> {
  const now = Date.now();
  await mailSendsRepository(deps.db).transition(fence.accountId, fence.id, ['sending'], {
    status: 'pending',
    lastError: reason,
    reconcileUntil: now + deps.config.mail.reconcileWindowMs,
  });
  await scheduleReconcile(deps, fence, 1, deps.config.mail.reconcileDelayMs);
}

async function scheduleReconcile(deps: ReviewDeps, fence: MailSend, attempt: number, delay: number): Promise<void> {
  try {
    await enqueue(deps.queues, mailReconcile, { accountId: fence.accountId, sendId: fence.id }, { attempt, delay });
  } catch (err) {
    deps.logger.warn({ sendId: fence.id, err: (err as Error).message }, 'reconciliation not queued; the mail sweep will pick it up');
  }
}

/**
 * Settles one fence whose answer was lost. Asks the transport; where it cannot tell and the provider
 * does not deduplicate, it waits and asks again until the window closes, then hands the question to a
 * person as a card. It never sends again without an idempotency key the provider honours.
 */
export async function reconcileSend(deps: ReviewDeps, accountId: string, sendId: string): Promise<'settled' | 'waiting' | 'asked' | 'noop'> {
  const repo = mailSendsRepository(deps.db);
  let fence = await repo.find(accountId, sendId);
  if (!fence) return 'noop';
  const now = Date.now();
  if (fence.status === 'sending') {
    // A sender that died between fence and answer: its answer is lost too.
    fence = await repo.transition(accountId, sendId, ['sending'], { status: 'pending', reconcileUntil: now + deps.config.mail.reconcileWindowMs });
    if (!fence) return 'noop';
  }
  if (fence.status !== 'pending') return 'noop';
  const card = await cardsRepository(deps.db).find(accountId, fence.cardId);
  const unchanged = !card || card.version === 1;
  const transport = transportFor(deps.config);
  const found = await transport.lookup(fence.idempotencyKey).catch(() => ({ state: 'unknown' as const }));
  const open = fence;
  const settle = (providerId: string) => recordKnownOutcome(deps.logger, open.id, 'sent', () => settleSent(deps.db, open, providerId, { unchanged }));
  if (found.state === 'sent') {
    await settle(found.providerId);
    return 'settled';
  }
  if (found.state === 'not_found' && transport.canResend) {
    // A failed resend leaves it unsettled; the same key keeps the next try safe.
    const accepted = await transport.send({ from: deps.config.mail.from, to: fence.to, subject: fence.subject, text: fence.body }, fence.idempotencyKey).catch(() => null);
    if (accepted) {
      await settle(accepted.providerId);
      return 'settled';
    }
  }
  const attempts = fence.attempts + 1;
  if (fence.reconcileUntil !== null && now >= fence.reconcileUntil) {
    await askPerson(deps.db, fence);
    return 'asked';
  }
  await repo.transition(accountId, sendId, ['pending'], { attempts });
  const left = Math.max(0, (fence.reconcileUntil ?? now) - now);
  const delay = Math.min(deps.config.mail.reconcileDelayMs * 2 ** Math.min(attempts, 10), left);
  await scheduleReconcile(deps, fence, attempts + 1, delay);
  return 'waiting';
}

/** Past the window with no answer: the fence waits for a person, through an urgent choice card. */
async function askPerson(db: Db, fence: MailSend): Promise<void> {
  await db.transaction(async (trx) => {
    const questionId = newId('card');
    const moved = await mailSendsRepository(trx).transition(fence.accountId, fence.id, ['pending'], { status: 'unknown', questionCardId: questionId });
    if (!moved) return;
    await cardsRepository(trx).insert({
      id: questionId,
      accountId: fence.accountId,
      kind: 'choice',
      sourceType: DELIVERY_QUESTION_SOURCE,
      title: `Did the mail to ${fence.to} go out?`,
      prompt: 'The mail service took this message but never confirmed it, and it cannot be asked. Check the recipient or the sent folder; it is not sent again unless you say so.',
      summary: fence.subject,
      priority: 'urgent',
      options: DELIVERY_OPTIONS,
      payload: { sendId: fence.id, cardId: fence.cardId, to: fence.to, subject: fence.subject, fencedAt: fence.createdAt },
      actions: ['choose'],
      primaryLabel: 'Confirm delivery',
      ladderChecked: true,
    });
  });
}

/** A person's answer to a delivery question: mark the mail sent, or void the fence so it can be sent again. */
export async function settleByPerson(trx: Trx, accountId: string, sendId: string, value: string): Promise<void> {
  const fence = await mailSendsRepository(trx).find(accountId, sendId);
  if (!fence || fence.status !== 'unknown') return;
  const at = Date.now();
  if (value === 'mark_sent') {
    await mailSendsRepository(trx).transition(accountId, sendId, ['unknown'], { status: 'sent', settledAt: at });
    await cardsRepository(trx).transition(accountId, fence.cardId, { statuses: ['sending'] }, {
      status: 'sent',
      resolvedAt: at,
      resolution: { action: 'send', by: fence.decidedBy, at, sendId, to: fence.to, confirmedBy: 'person' },
    });
    await recordChannelEvent(trx, accountId, { channel: 'email', type: 'sent', at, decidedBy: fence.decidedBy, refId: sendId });
    return;
  }
  await mailSendsRepository(trx).transition(accountId, sendId, ['unknown'], { status: 'not_sent', settledAt: at, lastError: 'a person said it did not arrive' });
  await cardsRepository(trx).transition(accountId, fence.cardId, { statuses: ['sending'] }, { status: 'pending' });
}

/** The mail sweep: reconciles fences no job is working on (stale `sending`, `pending` without a job). */
export async function sweepSends(deps: ReviewDeps): Promise<number> {
  const stale = Date.now() - 2 * deps.config.mail.sendTimeoutMs;
  const fences = await mailSendsRepository(deps.db).unsettled(stale, 100);
  let n = 0;
  for (const f of fences) {
    if (f.status === 'pending' && f.updatedAt > stale) continue;
    await reconcileSend(deps, f.accountId, f.id).catch((err) => deps.logger.warn({ sendId: f.id, err: (err as Error).message }, 'reconcile failed'));
    n++;
  }
  return n;
}
