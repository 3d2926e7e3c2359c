import { NotFound } from '../errors.js';
import { actionsFor, normaliseOptions, primaryLabelFor, QUEUE_STATUSES } from './cards/card-shape.js';
import { capPayload, cardsRepository, type Card, type QueueRow } from './cards/cards.repository.js';
import type { ReviewDeps } from './review.types.js';

// The review queue's read side: a card as the API shows it, the queue page and one card
// (the person's verbs are in review.service.ts; a card enters through src/review/cards/doors.ts).

/** A card as spec 2.2 shows it: no account, turn or bookkeeping columns. */
export function cardView(c: Card) {
  return {
    id: c.id,
    kind: c.kind,
    sourceType: c.sourceType,
    status: c.status,
    title: c.title,
    prompt: c.prompt,
    summary: c.summary,
    detail: (c.detail ?? null) as Record<string, unknown> | null,
    priority: c.priority,
    options: normaliseOptions(c.options),
    textInput: (c.textInput ?? null) as Record<string, unknown> | null,
    budgetChange: (c.budgetChange ?? null) as Record<string, unknown> | null,
    // The API's copy: long text capped (spec 8.3), as GET /review renders it; the card keeps the whole draft.
    payload: capPayload(c.payload) as Record<string, unknown>,
    actions: c.actions,
    primaryLabel: c.primaryLabel,
    autoResolveAt: c.autoResolveAt,
    dueAt: c.dueAt,
    snoozedUntil: c.snoozedUntil,
    leadId: c.leadId,
    leadContactId: c.leadContactId,
    postId: c.postId,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    resolvedAt: c.resolvedAt,
    resolution: (c.resolution ?? null) as Record<string, unknown> | null,
  };
}

/** Before a read's repair write: the API's word that the request was admitted (it rejects when not). */
export type BeforeWrite = () => Promise<void>;
const noWait: BeforeWrite = () => Promise.resolve();

/**
 * Snoozed cards whose time has come return to pending (the wake job does this too; whoever is first
 * wins). Only after `beforeWrite`: a read begun beside the rate limiter writes only once it is admitted.
 */
async function wakeDue(deps: ReviewDeps, accountId: string, beforeWrite: BeforeWrite): Promise<void> {
  const now = Date.now();
  const due = await cardsRepository(deps.db).snoozedDue(accountId, now);
  if (due.length) await beforeWrite();
  for (const s of due) {
    await cardsRepository(deps.db).transition(
      accountId,
      s.id,
      { statuses: ['snoozed'], snoozedUntil: s.snoozedUntil },
      { status: 'pending', snoozedUntil: null },
      undefined,
      'timer',
    );
  }
}

/**
 * A queue card's JSON: Postgres's rendering of its stored fields with the computed ones added. The
 * same object as `cardView` of that card (test/review/queue-json.test.ts holds them together).
 */
export function queueCardJson(r: QueueRow): string {
  const shape = { kind: r.kind, sourceType: r.sourceType, status: r.status, budgetChange: r.budgetChange, resolution: r.resolution };
  const computed = JSON.stringify({
    options: normaliseOptions(r.options),
    actions: actionsFor(shape),
    primaryLabel: primaryLabelFor(shape),
  });
  return `${r.json.slice(0, -1)},${computed.slice(1)}`;
}

/** One read of the queue page: its JSON array text, and what a cache of it must know. */
export interface QueuePage {
  items: string;
  /** The earliest wake still to come of the account's snoozed cards (null: none; undefined: not asked, the page was empty). */
  nextWake: number | null | undefined;
  /** This read woke due snoozed cards (a write): the page is newer than the version the read began under. */
  woke: boolean;
}

/**
 * GET /review: queue statuses only, snoozed cards hidden until their time, priority band then newest.
 * Answers the JSON array text of the page (cards as `cardView` shows them).
 */
export async function listCards(
  deps: ReviewDeps,
  accountId: string,
  q: { status?: string; limit: number },
  beforeWrite: BeforeWrite = noWait,
): Promise<QueuePage> {
  const statuses = q.status ? [q.status] : [...QUEUE_STATUSES];
  const repo = cardsRepository(deps.db);
  let now = Date.now();
  let page = await repo.queuePage(accountId, statuses, q.limit, now);
  let woke = false;
  // Nearly always nothing is due and the page is final: one statement. Otherwise wake, then read again.
  if (page.cards.some((c) => c.status === 'snoozed' && c.snoozedUntil !== null && c.snoozedUntil <= now)) {
    await wakeDue(deps, accountId, beforeWrite);
    woke = true;
    now = Date.now();
    page = await repo.queuePage(accountId, statuses, q.limit, now);
    page.cards = page.cards.filter((c) => c.status !== 'snoozed');
  }
  return { items: `[${page.cards.map(queueCardJson).join(',')}]`, nextWake: page.nextWake, woke };
}

/** GET /review/{id}: one card of any status, as JSON text rendered as the queue renders its cards. */
export async function getCardJson(deps: ReviewDeps, accountId: string, id: string, beforeWrite: BeforeWrite = noWait): Promise<string> {
  await wakeDue(deps, accountId, beforeWrite);
  const row = await cardsRepository(deps.db).findJson(accountId, id);
  if (!row) throw new NotFound();
  return queueCardJson(row);
}

/** The cards one agent turn filed, oldest first: the dashboard's chat links each to the review desk. */
export async function cardsFiledByTurn(db: ReviewDeps['db'], accountId: string, turnId: string) {
  const cards = await cardsRepository(db).listByTurn(accountId, turnId);
  return cards.map((c) => ({ id: c.id, title: c.title, status: c.status, primaryLabel: primaryLabelFor(c) }));
}
