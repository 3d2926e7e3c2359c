import { cannotShip } from '../channels/registry.js';
import { AppError, MailNotSettled, Rejected } from '../errors.js';
import type { DecidedBy } from '../results/channel-events.js';
import { queueEvents } from '../events/outbox.js';
import { isMailCard } from './cards/card-shape.js';
import { cardsRepository, type Card, type CardChanges } from './cards/cards.repository.js';
import { outboundTexts, privateTextIn } from './cards/private-text.js';
import { recordDecision } from './decisions.js';
import { applyLadder } from './ladder.service.js';
import type { ReviewDeps } from './review.types.js';
import { scheduleAutoResolve } from './timer-jobs.js';
import type { ReviewRules } from './outside-data.js';

/**
 * Ships a card the ladder (or a setting) approved: the shipping area's fenced path, handed in by whoever
 * runs the timer (src/shipping/after-approval.ts), because review decides and never ships. It throws the
 * shipping path's errors (409 `rejected`, 503 `unavailable` or `delivery_pending`); `whenNotSent` is what
 * the card gets, in the release's transaction, when nothing went out.
 */
export type ShipApproved = (
  card: Card,
  opts: { decidedBy: DecidedBy; autoResolveAt: number; whenNotSent: (permanent: boolean, sentence: string) => CardChanges },
) => Promise<unknown>;

/**
 * The trust ladder's deadline. Acts only while the card is pending with exactly this `autoResolveAt`:
 * a person's verb, a snooze or a re-schedule first makes it a no-op. Work ships through the same fenced
 * path as a person's verb, recorded as decided by the trust ladder (or the setting); work whose adapter
 * is not connected on the account is never resolved into a void: the deadline goes and a note says why.
 */
export async function resolveOnDeadline(
  deps: ReviewDeps,
  ship: ShipApproved,
  accountId: string,
  cardId: string,
  at: number,
): Promise<'resolved' | 'sent' | 'held' | 'retry' | 'noop'> {
  const repo = cardsRepository(deps.db);
  const card = await repo.find(accountId, cardId);
  if (card?.status !== 'pending' || card.autoResolveAt !== at) return 'noop';
  const planned = (card.detail as { autoResolve?: { by?: string } } | null)?.autoResolve;
  // A person's approval held for a send window (src/shipping/send-window-hold.ts) ships as the person's.
  const decidedBy = planned?.by === 'setting' || planned?.by === 'person' ? planned.by : 'trust_ladder';
  const leaveNote = async (note: string) => {
    await repo.transition(
      accountId,
      cardId,
      { statuses: ['pending'], autoResolveAt: at },
      {
        autoResolveAt: null,
        detail: { ...(card.detail as Record<string, unknown> | null), autoResolve: null, note },
      },
    );
    return 'noop' as const;
  };
  // Mail checks its own text on the way out (the shipping path); any other card is checked here, before anything else.
  const quotes = isMailCard(card) ? null : await privateTextIn(deps.db, accountId, outboundTexts(card));
  if (quotes) return leaveNote(`Not approved automatically: this card ${quotes}`);
  if (card.kindOfWork) {
    const missing = await cannotShip(deps.db, accountId, card.kindOfWork);
    if (missing) return leaveNote(`Not shipped automatically: ${missing}; it waits for a person`);
    const next = nextTry(deps, card);
    try {
      const shipped = await ship(card, {
        decidedBy,
        autoResolveAt: at,
        whenNotSent: (permanent, sentence) => afterNotSent(card, permanent, sentence, next),
      });
      // Outside its send window the mail waits for the next opening, under a new deadline.
      return (shipped as { status?: string } | null)?.status === 'held' ? 'held' : 'sent';
    } catch (err) {
      if (err instanceof MailNotSettled && err.error === 'delivery_pending') return 'sent';
      // Nothing was sent; the release already set the next try (or the note): queue its timer.
      if (err instanceof MailNotSettled && err.error === 'unavailable') {
        if (!next) return 'noop';
        await scheduleAutoResolve(deps, accountId, cardId, next.at);
        return 'retry';
      }
      // Refused before anything was claimed (a blocked recipient): leave it to a person, say why. A
      // refusal after the claim already has its note from the release; this guard then matches nothing.
      if (err instanceof Rejected) return leaveNote(`Not sent automatically: ${err.message}`);
      if (err instanceof AppError && err.status === 409) return 'noop';
      throw err;
    }
  }
  const now = Date.now();
  // The same decision as a person's approve: `card.decided` commits with it, so the same follow-ups run.
  const event = await deps.db.transaction(async (trx) => {
    const done = await cardsRepository(trx).transition(
      accountId,
      cardId,
      { statuses: ['pending'], autoResolveAt: at },
      {
        status: 'resolved',
        resolvedAt: now,
        resolution: { action: 'approve', by: decidedBy, at: now },
      },
    );
    return done ? recordDecision(trx, card, 'approve', decidedBy, null, now) : null;
  });
  if (!event) return 'noop';
  await queueEvents(deps, [event]);
  return 'resolved';
}

/** How many times an automatic send is tried while the mail service cannot be reached, before a person is asked. */
export const AUTO_SEND_TRIES = 5;

type LadderDetail = Record<string, unknown> & { autoResolve?: Record<string, unknown> & { tries?: number } };

/** The try after this one, if any is left: MAIL_RETRY_AFTER_SECONDS later, doubling with each try. */
function nextTry(deps: ReviewDeps, card: Card): { tries: number; at: number } | null {
  const tries = ((card.detail as LadderDetail | null)?.autoResolve?.tries ?? 1) + 1;
  if (tries > AUTO_SEND_TRIES) return null;
  return { tries, at: Date.now() + deps.config.mail.retryAfterSeconds * 1000 * 2 ** (tries - 2) };
}

/**
 * The card's changes when an automatic send certainly did not go out, made in the same transaction
 * that returns it to `pending`: refused for good, or out of tries → no deadline and a note for a
 * person; the mail service out of reach → the next try's deadline (a person who acts first wins:
 * every try is the same guarded auto-resolve).
 */
function afterNotSent(card: Card, permanent: boolean, sentence: string, next: { tries: number; at: number } | null): CardChanges {
  const detail = (card.detail ?? {}) as LadderDetail;
  // The cause the shipping path names in its sentence, when there is one worth telling (a TLS failure toward the relay).
  const why = / could not be reached( \(.+\)); nothing was sent/.exec(sentence)?.[1] ?? '';
  if (permanent) return { autoResolveAt: null, detail: { ...detail, autoResolve: null, note: `Not sent automatically: ${sentence}` } };
  if (!next) {
    return {
      autoResolveAt: null,
      detail: {
        ...detail,
        autoResolve: null,
        note: `Not sent automatically: the mail service could not be reached in ${AUTO_SEND_TRIES} tries${why}; nothing was sent`,
      },
    };
  }
  return {
    autoResolveAt: next.at,
    detail: {
      ...detail,
      autoResolve: { ...detail.autoResolve, at: next.at, tries: next.tries },
      note:
        `The mail service could not be reached${why}; nothing was sent. Try ${next.tries} of ${AUTO_SEND_TRIES} at ` +
        `${new Date(next.at).toISOString()}.`,
    },
  };
}

/** Snooze wake-up: back to pending, only if the card is still snoozed until exactly `until`. */
export async function wakeCard(deps: ReviewDeps, accountId: string, cardId: string, until: number): Promise<boolean> {
  const woke = await cardsRepository(deps.db).transition(
    accountId,
    cardId,
    { statuses: ['snoozed'], snoozedUntil: until },
    { status: 'pending', snoozedUntil: null },
  );
  return woke !== null;
}

/**
 * The repair sweep: ladder for unseen cards, and any timer whose moment passed without its job. Revisions
 * due are the agent's part of the sweep (src/agent/messages/card-revision.ts, `sweepRevisions`).
 */
export async function sweepTimers(deps: ReviewDeps & ReviewRules, ship: ShipApproved, limit = 200): Promise<Record<string, number>> {
  const repo = cardsRepository(deps.db);
  const now = Date.now();
  const due = await repo.due(now, limit);
  const counts = { ladder: 0, autoResolved: 0, woken: 0 };
  for (const c of due.unchecked) {
    const card = await repo.find(c.accountId, c.id);
    if (card && (await applyLadder(deps, card))) counts.ladder++;
  }
  for (const c of due.autoResolve) {
    const card = await repo.find(c.accountId, c.id);
    if (card?.autoResolveAt && (await resolveOnDeadline(deps, ship, c.accountId, c.id, card.autoResolveAt)) !== 'noop')
      counts.autoResolved++;
  }
  for (const c of due.snoozed) {
    const card = await repo.find(c.accountId, c.id);
    if (card?.snoozedUntil && (await wakeCard(deps, c.accountId, c.id, card.snoozedUntil))) counts.woken++;
  }
  return counts;
}
