import { type EventRef, queueEvents } from '../events/outbox.js';
import { recordDecision } from '../review/decisions.js';
import { auditedWrite, type Actor } from '../audit/audit.service.js';
import { isBlocked } from '../blocklist/blocklist.service.js';
import type { ChannelAdapter, Shipped, Work } from '../channels/channel.types.js';
import { AnswerLost, NotShipped } from '../channels/channel.types.js';
import { adapterFor, cannotShip } from '../channels/registry.js';
import type { Db, Queryable, Trx } from '../db.js';
import { BadRequest, InvalidAction, MailNotSettled, NotFound, Rejected } from '../errors.js';
import type { DecidedBy } from '../results/channel-events.js';
import { isMailCard } from '../review/cards/card-shape.js';
import { cardsRepository, type Card, type CardChanges } from '../review/cards/cards.repository.js';
import { fencesRepository, type Fence } from './fence.repository.js';
import { privateTextIn } from '../review/cards/private-text.js';
import { recordKnownOutcome } from './record-outcome.js';
import { settleRefusal } from './refusals.service.js';
import { fenceWork, markPending, releaseFence, settleSent } from './fence.service.js';
import type { ReviewDeps } from '../review/review.types.js';
import type { ShipDeps } from './hold-rule.js';
import { queueNextStep } from './sequence-state.js';
import { type HeldResult, holdUntilWindow, LOST_HOLD } from './send-window-hold.js';

export interface SendResult {
  ok: true;
  sendId: string;
  status: 'sent';
  to: string;
  providerId: string | null;
  decidedBy: DecidedBy;
}

export interface ShipOptions {
  /** A mail reply's body as the person typed it into this request (replaces the draft's). */
  body?: string;
  decidedBy: DecidedBy;
  autoResolveAt?: number;
  /**
   * What else the card gets, in the same transaction, when the service certainly did not take the
   * work and the card goes back to `pending` (`sentence` is the refusal's wording). The trust ladder
   * sets its next try or its note here, so no reader sees the card in between.
   */
  whenNotSent?: (permanent: boolean, sentence: string) => CardChanges;
  /** The instant a send window is judged at (send-window-hold.ts); now when absent. */
  now?: number;
}

class LostRace extends Error {}

/** Why a card cannot be shipped now: the spec's 409s, or 503 while an earlier shipment awaits reconciliation. */
async function refusal(q: Queryable, card: Card, adapter: ChannelAdapter, retryAfter: number): Promise<Error> {
  if (card.status === 'sent') return new Rejected(`this ${adapter.noun} was already sent; it is never sent twice`);
  if (card.status === 'sending') {
    const fence = await fencesRepository(q).liveForCard(card.accountId, card.id);
    if (fence && (fence.status === 'pending' || fence.status === 'unknown')) {
      return new MailNotSettled(
        'delivery_pending',
        `${adapter.service} has not confirmed delivery yet; retry this same send later`,
        retryAfter,
      );
    }
  }
  return new InvalidAction(card.actions);
}

/** The refusal for a card another verb moved first, read again. */
async function refusalNow(db: Db, card: Card, adapter: ChannelAdapter, retryAfter: number): Promise<Error> {
  const now = await cardsRepository(db).find(card.accountId, card.id);
  return now ? refusal(db, now, adapter, retryAfter) : new NotFound();
}

async function inTransaction<T>(db: Db, actor: Actor | null, targetId: string, fn: (trx: Trx) => Promise<T>): Promise<T> {
  if (!actor) return db.transaction(fn);
  return auditedWrite(db, actor, async (trx) => ({ result: await fn(trx), targetId }));
}

/** The adapter that ships this card's work on its account; 409 naming the missing connection when none does. */
export async function adapterForCard(deps: Pick<ReviewDeps, 'db' | 'config'>, card: Card): Promise<ChannelAdapter> {
  if (!card.kindOfWork) throw new InvalidAction(card.actions);
  const missing = await cannotShip(deps.db, card.accountId, card.kindOfWork);
  const adapter = missing ? null : adapterFor(deps.config, deps.db, card.kindOfWork);
  if (!adapter) throw new Rejected(missing ?? `${card.kindOfWork} has no adapter`);
  return adapter;
}

/** POST /review/{id}/send: mail cards only (other work ships through `answer` approve). */
export async function sendCard(
  deps: ShipDeps,
  actor: Actor | null,
  accountId: string,
  cardId: string,
  opts: ShipOptions,
): Promise<SendResult | HeldResult> {
  const card = await cardsRepository(deps.db).find(accountId, cardId);
  if (!card) throw new NotFound();
  if (!isMailCard(card)) throw new InvalidAction(card.actions);
  if (opts.body !== undefined && card.sourceType === 'mail_draft') {
    throw new BadRequest('body is only for mail replies; a mail_draft always sends the reviewed copy');
  }
  return shipCard(deps, actor, card, opts);
}

/**
 * Ships a card's work once, through the adapter its kind of work names. The card is claimed
 * (pending → sending) and the fence row written in one transaction before the adapter is called, so of
 * any number of concurrent callers exactly one reaches the service; the others get 409 (or 503
 * `delivery_pending` while a lost answer is being reconciled). `autoResolveAt` makes the trust ladder's
 * shipment lose to anything a person did first. The work is read from the stored draft (whole).
 */
export async function shipCard(deps: ShipDeps, actor: Actor | null, card: Card, opts: ShipOptions): Promise<SendResult | HeldResult> {
  const { db } = deps;
  const { accountId, id: cardId } = card;
  const adapter = await adapterForCard(deps, card);
  const retryAfter = adapter.timings.retryAfterSeconds;
  const verb = isMailCard(card) ? 'send' : 'approve';
  if (!card.actions.includes(verb)) throw await refusal(db, card, adapter, retryAfter);
  const draft = adapter.workOf(card);
  const work = opts.body === undefined ? draft : { ...draft, body: opts.body };
  if (adapter.needsRecipient && !work.to) throw new Rejected('this card names no recipient; request changes so the agent adds one');
  const to = work.to ?? '';
  // A body the person typed into this request is their own words; everything else the agent wrote.
  const quotes = await privateTextIn(db, accountId, opts.body === undefined ? [work.subject, work.body] : [work.subject]);
  if (quotes) throw new Rejected(`this ${adapter.noun} ${quotes}; nothing was sent: request changes so the agent rewrites it`);
  // Outside its send window the approval is kept and the mail waits for the window (nothing is fenced yet).
  const held = await holdUntilWindow(deps, card, to, opts, (fn) => inTransaction(db, actor, cardId, fn));
  if (held === LOST_HOLD) throw await refusalNow(db, card, adapter, retryAfter);
  if (held) return held;

  let fence: Fence;
  let decided: EventRef;
  try {
    [fence, decided] = await inTransaction(db, actor, cardId, async (trx) => {
      if (to && (await isBlocked(trx, accountId, to))) throw new Rejected(`${to} is on the block list; nothing was sent`);
      const guard = {
        statuses: ['pending', 'snoozed'],
        version: card.version,
        ...(opts.autoResolveAt !== undefined ? { autoResolveAt: opts.autoResolveAt } : {}),
      };
      const claimed = await cardsRepository(trx).transition(accountId, cardId, guard, {
        status: 'sending',
        autoResolveAt: null,
        snoozedUntil: null,
      });
      if (!claimed) throw new LostRace();
      // The claim is the decision: `card.decided` commits with it, and is queued once the work was shipped.
      const event = await recordDecision(trx, card, verb, opts.decidedBy, actor, Date.now());
      return [await fenceWork(trx, adapter, card, work, { step: 0, decidedBy: opts.decidedBy }), event] as const;
    });
  } catch (err) {
    if (!(err instanceof LostRace)) throw err;
    throw await refusalNow(db, card, adapter, retryAfter);
  }

  const changed = opts.body !== undefined && opts.body !== draft.body;
  // Queued after the service answered (what follows an approved experiment finds it started), whatever it answered.
  const providerId = await shipFenced(deps, adapter, fence, work, {
    unchanged: !changed && card.version === 1,
    ...(opts.whenNotSent ? { whenNotSent: opts.whenNotSent } : {}),
  }).finally(() => queueEvents(deps, [decided]));
  if (card.kindOfWork === 'sequence') await queueNextStep(deps, accountId, cardId);
  return { ok: true, sendId: fence.id, status: 'sent', to, providerId, decidedBy: opts.decidedBy };
}

/**
 * Ships one fenced piece of work (a card's, or a sequence's later step) and records what became of it:
 * sent (fence and card settled once), not sent (the fence void; 409 `rejected` when the service said no
 * for good, 503 `unavailable` otherwise), or unknown (reconciliation queued; 503 `delivery_pending`).
 * Returns the service's id for what it took.
 */
export async function shipFenced(
  deps: ShipDeps,
  adapter: ChannelAdapter,
  fence: Fence,
  work: Work,
  opts: { unchanged: boolean; whenNotSent?: ShipOptions['whenNotSent'] },
): Promise<string> {
  const { db } = deps;
  const retryAfter = adapter.timings.retryAfterSeconds;
  let accepted: Shipped;
  try {
    accepted = await adapter.ship({ ...work, body: fence.body, details: fence.details }, fence.idempotencyKey);
  } catch (err) {
    if (err instanceof NotShipped && err.refusal) await refusedByRelay(deps, fence, err, opts.whenNotSent);
    if (err instanceof NotShipped) {
      const s = adapter.service;
      const why = err.detail ? ` (${err.detail})` : '';
      const sentence = err.permanent ? `${s} refused the message: ${err.message}` : `${s} could not be reached${why}; nothing was sent`;
      // The cause goes to the log whatever it is (the relay's TLS, a refused connection): the answer says only "not reached".
      deps.logger.warn(
        { sendId: fence.id, service: s, reason: err.message },
        `not sent: ${s} ${err.permanent ? 'refused' : 'could not be reached'}`,
      );
      await recordKnownOutcome(deps.logger, fence.id, 'not_sent', () =>
        releaseFence(db, fence, err.message, opts.whenNotSent?.(err.permanent, sentence)),
      );
      if (err.permanent) throw new Rejected(sentence);
      throw new MailNotSettled('unavailable', `${sentence}; retry this same send`, retryAfter);
    }
    await markPending(deps, adapter, fence, err instanceof AnswerLost ? err.message : `send failed mid-way: ${(err as Error).message}`);
    throw new MailNotSettled('delivery_pending', `${adapter.service} ${ANSWER_LOST}`, retryAfter);
  }
  try {
    await recordKnownOutcome(deps.logger, fence.id, 'sent', () =>
      settleSent(db, fence, accepted.providerId, { unchanged: opts.unchanged, onSent: deps.onSent }),
    );
  } catch (err) {
    // Out of tries: the fence stays `sending` (or becomes `pending`), and reconciliation or the sweep settles it.
    deps.logger.error(
      { sendId: fence.id, err: (err as Error).message },
      'the service took the work but its outcome could not be recorded; handed to reconciliation',
    );
    await markPending(deps, adapter, fence, `accepted as ${accepted.providerId} but not recorded: ${(err as Error).message}`).catch(
      () => undefined,
    );
    throw new MailNotSettled(
      'delivery_pending',
      `${adapter.service} took the message but its delivery could not be recorded yet; it is being confirmed, so retry this ` +
        `same send later`,
      retryAfter,
    );
  }
  return accepted.providerId;
}

/**
 * The mail relay answered about the recipient (at RCPT or DATA): settled by settleRefusal. A hard bounce
 * is 409 `rejected`; a soft failure under the limit is 503 `unavailable` (the card is pending again); a
 * fence another path settled first is left to that path (503 `delivery_pending`: read the card again).
 */
async function refusedByRelay(deps: ReviewDeps, fence: Fence, err: NotShipped, whenNotSent: ShipOptions['whenNotSent']): Promise<never> {
  const permanent = err.refusal!.code >= 500;
  const sentence = permanent ? `the mail service refused the message: ${err.message}` : 'the mail service deferred the message';
  const outcome = await recordKnownOutcome(deps.logger, fence.id, 'not_sent', () =>
    settleRefusal(deps.db, fence, err.refusal!, {
      softLimit: deps.config.mail.failures.softFailuresBeforeBlock,
      cardChanges: whenNotSent?.(permanent, `${sentence}; nothing was sent`),
    }),
  );
  const retryAfter = deps.config.mail.retryAfterSeconds;
  if (outcome.kind === 'bounced') throw new Rejected(`${sentence}; nothing was sent, and ${fence.to} is now on the block list`);
  if (outcome.kind === 'deferred') {
    throw new MailNotSettled(
      'unavailable',
      `the mail service deferred the message (${err.refusal!.reply}); retry this same send`,
      retryAfter,
    );
  }
  throw new MailNotSettled('delivery_pending', 'this send was settled by another path; read the card again', retryAfter);
}

const ANSWER_LOST = 'took the message but its answer was lost; delivery is being confirmed, so retry this same send later';
