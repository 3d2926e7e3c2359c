import { dispatchTurn, isTerminal, recordTurn } from '../agent/agent.service.js';
import { turnsRepository } from '../agent/turns.repository.js';
import { AppError, MailNotSettled, Rejected } from '../errors.js';
import { cardRevisionReturn } from '../jobs/card-revision-return.job.js';
import { enqueue } from '../jobs/registry.js';
import { sendCard } from '../mail/mail.service.js';
import { isMailCard } from './card-shape.js';
import { cardsRepository, type Card, type CardChanges } from './cards.repository.js';
import { outboundTexts, privateTextIn } from './private-text.js';
import { applyLadder, scheduleAutoResolve } from './review.service.js';
import type { ReviewDeps } from './review.types.js';

/**
 * The trust ladder's deadline. Acts only while the card is pending with exactly this `autoResolveAt`:
 * a person's verb, a snooze or a re-schedule first makes it a no-op. A mail card is sent through the
 * same fenced path as a person's send, recorded as decided by the trust ladder.
 */
export async function autoResolve(deps: ReviewDeps, accountId: string, cardId: string, at: number): Promise<'resolved' | 'sent' | 'retry' | 'noop'> {
  const repo = cardsRepository(deps.db);
  const card = await repo.find(accountId, cardId);
  if (!card || card.status !== 'pending' || card.autoResolveAt !== at) return 'noop';
  const planned = (card.detail as { autoResolve?: { by?: string } } | null)?.autoResolve;
  const decidedBy = planned?.by === 'setting' ? 'setting' : 'trust_ladder';
  if (isMailCard(card)) {
    const next = nextTry(deps, card);
    try {
      await sendCard(deps, null, accountId, cardId, { decidedBy, autoResolveAt: at, whenNotSent: (permanent, sentence) => afterNotSent(card, permanent, sentence, next) });
      return 'sent';
    } catch (err) {
      if (err instanceof MailNotSettled && err.error === 'delivery_pending') return 'sent';
      // Nothing was sent; the release already set the next try (or the note): queue its timer.
      if (err instanceof MailNotSettled && err.error === 'unavailable') {
        if (!next) return 'noop';
        await scheduleAutoResolve(deps, accountId, cardId, next.at);
        return 'retry';
      }
      if (err instanceof Rejected) {
        // Refused before anything was claimed (a blocked recipient): leave it to a person, say why. A
        // refusal after the claim already has its note from the release; this guard then matches nothing.
        await repo.transition(accountId, cardId, { statuses: ['pending'], autoResolveAt: at }, {
          autoResolveAt: null,
          detail: { ...(card.detail as Record<string, unknown> | null), autoResolve: null, note: `Not sent automatically: ${err.message}` },
        });
        return 'noop';
      }
      if (err instanceof AppError && err.status === 409) return 'noop';
      throw err;
    }
  }
  const quotes = await privateTextIn(deps.db, accountId, outboundTexts(card));
  if (quotes) {
    await repo.transition(accountId, cardId, { statuses: ['pending'], autoResolveAt: at }, {
      autoResolveAt: null,
      detail: { ...(card.detail as Record<string, unknown> | null), autoResolve: null, note: `Not approved automatically: this card ${quotes}` },
    });
    return 'noop';
  }
  const now = Date.now();
  const done = await repo.transition(accountId, cardId, { statuses: ['pending'], autoResolveAt: at }, {
    status: 'resolved',
    resolvedAt: now,
    resolution: { action: 'approve', by: decidedBy, at: now },
  });
  return done ? 'resolved' : 'noop';
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
  if (permanent) return { autoResolveAt: null, detail: { ...detail, autoResolve: null, note: `Not sent automatically: ${sentence}` } };
  if (!next) {
    return { autoResolveAt: null, detail: { ...detail, autoResolve: null, note: `Not sent automatically: the mail service could not be reached in ${AUTO_SEND_TRIES} tries; nothing was sent` } };
  }
  return {
    autoResolveAt: next.at,
    detail: {
      ...detail,
      autoResolve: { ...detail.autoResolve, at: next.at, tries: next.tries },
      note: `The mail service could not be reached; nothing was sent. Try ${next.tries} of ${AUTO_SEND_TRIES} at ${new Date(next.at).toISOString()}.`,
    },
  };
}

/** Snooze wake-up: back to pending, only if the card is still snoozed until exactly `until`. */
export async function wakeCard(deps: ReviewDeps, accountId: string, cardId: string, until: number): Promise<boolean> {
  const woke = await cardsRepository(deps.db).transition(accountId, cardId, { statuses: ['snoozed'], snoozedUntil: until }, { status: 'pending', snoozedUntil: null });
  return woke !== null;
}

/**
 * Revision kick-off: records a `revision` turn (the agent's one turn entry, in this transaction) and
 * claims the card for it in one commit, then dispatches the turn. A second run finds the card claimed.
 */
export async function startRevision(deps: ReviewDeps, accountId: string, cardId: string, version: number): Promise<string | null> {
  const card = await cardsRepository(deps.db).find(accountId, cardId);
  if (!card || card.status !== 'needs_revision' || card.version !== version || card.revisionTurnId) return null;
  const recorded = await deps.db.transaction(async (trx) => {
    const rec = await recordTurn(trx, deps.config, {
      accountId,
      kind: 'revision',
      origin: 'review',
      text:
        `Revise review card ${card.id} ("${card.title}"). The person asked for these changes: ${card.requestedChanges ?? ''}. ` +
        'Produce the revised version with the same tool that made it (same kind of work); it replaces the card under review.',
      data: {
        label: 'review card to revise',
        content: { cardId: card.id, kind: card.kind, sourceType: card.sourceType, title: card.title, summary: card.summary, payload: card.payload, requestedChanges: card.requestedChanges },
      },
      mode: 'queue',
    });
    const claimed = await cardsRepository(trx).transition(
      accountId,
      cardId,
      { statuses: ['needs_revision'], version, revisionTurnId: null },
      { revisionTurnId: rec.turn.id },
    );
    if (!claimed) throw new ClaimLost();
    return rec;
  }).catch((err) => {
    if (err instanceof ClaimLost) return null;
    throw err;
  });
  if (!recorded) return null;
  await dispatchTurn(deps, recorded);
  await enqueue(deps.queues, cardRevisionReturn, { accountId, cardId, turnId: recorded.turn.id }, { version, delay: 1_000 }).catch(
    (err: Error) => deps.logger.warn({ cardId, err: err.message }, 'revision return not queued; the card sweep will return it'),
  );
  return recorded.turn.id;
}

class ClaimLost extends Error {}
export class RevisionStillRunning extends Error {}

/**
 * Once the revision turn is over, the card returns to `pending` as the next version. The agent revises
 * with its ordinary tools: a card of the same sourceType that the revision turn produced is folded into
 * this one (its title, summary, prompt and payload become the new version; it is closed as `resolved`
 * with `resolution.action = 'merged'`). The earlier version and the request go to `history`.
 */
export async function returnRevision(deps: ReviewDeps, accountId: string, cardId: string, turnId: string): Promise<boolean> {
  const card = await cardsRepository(deps.db).find(accountId, cardId);
  if (!card || card.status !== 'needs_revision' || card.revisionTurnId !== turnId) return false;
  const turn = await turnsRepository(deps.db).find(accountId, turnId);
  if (turn && !isTerminal(turn.status)) throw new RevisionStillRunning(`revision turn ${turnId} is still ${turn.status}`);
  const replies = await turnsRepository(deps.db).latestReplies(turnId, 5);
  const agentNote = replies.map((r) => r.text).join('\n') || null;
  const produced = (await cardsRepository(deps.db).listByTurn(accountId, turnId)).find(
    (c) => c.id !== cardId && c.status === 'pending' && c.sourceType === card.sourceType,
  );
  const at = Date.now();
  const entry = {
    version: card.version,
    requestedChanges: card.requestedChanges,
    at,
    turnId,
    turnStatus: turn?.status ?? 'missing',
    agentNote,
    previous: { title: card.title, summary: card.summary, prompt: card.prompt, payload: card.payload },
    revisedFrom: produced?.id ?? null,
  };
  const detail = {
    ...((card.detail as Record<string, unknown> | null) ?? {}),
    revision: { version: card.version + 1, requestedChanges: card.requestedChanges, agentNote, changed: Boolean(produced) },
  };
  return deps.db.transaction(async (trx) => {
    const repo = cardsRepository(trx);
    if (produced) {
      const merged = await repo.transition(accountId, produced.id, { statuses: ['pending'] }, {
        status: 'resolved',
        resolvedAt: at,
        resolution: { action: 'merged', by: 'system', at, into: cardId },
        autoResolveAt: null,
      });
      if (!merged) throw new Error(`revised card ${produced.id} changed while being folded in; retrying`);
    }
    const back = await repo.transition(
      accountId,
      cardId,
      { statuses: ['needs_revision'], version: card.version, revisionTurnId: turnId },
      {
        status: 'pending',
        version: card.version + 1,
        history: [...card.history, entry],
        detail,
        ...(produced ? { title: produced.title, summary: produced.summary, prompt: produced.prompt, payload: produced.payload } : {}),
        requestedChanges: null,
        revisionDueAt: null,
        revisionTurnId: null,
        ladderChecked: true,
      },
    );
    if (!back && produced) throw new Error(`card ${cardId} changed while its revision was returned; retrying`);
    return back !== null;
  });
}

/**
 * The agent's way to change a card it is revising (title, summary, payload); the previous content is
 * kept in `history`. Only while the card is `needs_revision`.
 */
export async function applyRevision(
  deps: Pick<ReviewDeps, 'db'>,
  accountId: string,
  cardId: string,
  changes: Partial<Pick<Card, 'title' | 'summary' | 'payload'>>,
): Promise<Card | null> {
  const card = await cardsRepository(deps.db).find(accountId, cardId);
  if (!card || card.status !== 'needs_revision') return null;
  const previous = { version: card.version, title: card.title, summary: card.summary, payload: card.payload, replacedAt: Date.now() };
  return cardsRepository(deps.db).transition(accountId, cardId, { statuses: ['needs_revision'], version: card.version }, { ...changes, history: [...card.history, previous] });
}

/** The repair sweep: ladder for unseen cards, and any timer whose moment passed without its job. */
export async function sweepCards(deps: ReviewDeps, limit = 200): Promise<Record<string, number>> {
  const repo = cardsRepository(deps.db);
  const now = Date.now();
  const due = await repo.due(now, limit);
  const counts = { ladder: 0, autoResolved: 0, woken: 0, revisions: 0 };
  for (const c of due.unchecked) {
    const card = await repo.find(c.accountId, c.id);
    if (card && (await applyLadder(deps, card))) counts.ladder++;
  }
  for (const c of due.autoResolve) {
    const card = await repo.find(c.accountId, c.id);
    if (card?.autoResolveAt && (await autoResolve(deps, c.accountId, c.id, card.autoResolveAt)) !== 'noop') counts.autoResolved++;
  }
  for (const c of due.snoozed) {
    const card = await repo.find(c.accountId, c.id);
    if (card?.snoozedUntil && (await wakeCard(deps, c.accountId, c.id, card.snoozedUntil))) counts.woken++;
  }
  for (const c of due.revision) {
    const card = await repo.find(c.accountId, c.id);
    if (!card) continue;
    if (!card.revisionTurnId) {
      if (await startRevision(deps, c.accountId, c.id, card.version)) counts.revisions++;
    } else if (await returnRevision(deps, c.accountId, c.id, card.revisionTurnId).catch(() => false)) counts.revisions++;
  }
  return counts;
}
