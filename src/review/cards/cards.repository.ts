import { preparedQuery, type Queryable } from '../../db.js';
import { metrics, word } from '../../metrics/registry.js';
import { cardWrite } from '../../queue-version/card-writes.js';
import type { ActedBy } from '../../queue-version/live-events.js';
import { filed, updated } from './card-events.js';
import { actionsFor, kindOfWorkFor, PRIORITY_ORDER_SQL, primaryLabelFor } from './card-shape.js';
import type { Card, NewCard } from './card.js';
import { toRow, type CardChanges } from './card-changes.js';
import { payloadColumns } from './payload.js';
import { QUEUE_ROW_SELECT, toQueueRow, type QueueRow, type QueueRowRaw } from './queue-json.js';

export { capPayload, PAYLOAD_TEXT_LIMIT } from './payload.js';
export type { CardChanges } from './card-changes.js';
export { QUEUE_CARD_JSON, type QueueRow } from './queue-json.js';
export type { Card, NewCard } from './card.js';

interface CardRow {
  id: string;
  account_id: string;
  kind: string;
  source_type: string;
  status: string;
  title: string;
  prompt: string;
  summary: string;
  detail: unknown;
  priority: string;
  options: unknown;
  text_input: unknown;
  budget_change: unknown;
  payload: Record<string, unknown>;
  actions: string[];
  primary_label: string;
  auto_resolve_at: number | null;
  due_at: number | null;
  snoozed_until: number | null;
  lead_id: string | null;
  lead_contact_id: string | null;
  post_id: string | null;
  turn_id: string | null;
  created_at: number;
  updated_at: number;
  resolved_at: number | null;
  resolution: unknown;
  kind_of_work: string | null;
  from_outside: boolean;
  ladder_checked: boolean;
  version: number;
  history: unknown[];
  requested_changes: string | null;
  revision_due_at: number | null;
  revision_turn_id: string | null;
}

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/** What a card's verbs and primary label are computed from (card-shape.ts). */
const shapeOf = (r: CardRow) => ({
  kind: r.kind,
  sourceType: r.source_type,
  status: r.status,
  budgetChange: r.budget_change,
  resolution: r.resolution,
});

function toCard(r: CardRow): Card {
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    sourceType: r.source_type,
    status: r.status,
    title: r.title,
    prompt: r.prompt,
    summary: r.summary,
    detail: r.detail,
    priority: r.priority,
    options: r.options,
    textInput: r.text_input,
    budgetChange: r.budget_change,
    payload: r.payload,
    // Computed from kind, sourceType and status, so a verb that no longer applies is never offered.
    actions: actionsFor(shapeOf(r)),
    primaryLabel: primaryLabelFor(shapeOf(r)),
    autoResolveAt: r.auto_resolve_at,
    dueAt: r.due_at,
    snoozedUntil: r.snoozed_until,
    leadId: r.lead_id,
    leadContactId: r.lead_contact_id,
    postId: r.post_id,
    turnId: r.turn_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    resolvedAt: r.resolved_at,
    resolution: r.resolution,
    kindOfWork: r.kind_of_work,
    fromOutside: r.from_outside,
    ladderChecked: r.ladder_checked,
    version: r.version,
    history: r.history,
    requestedChanges: r.requested_changes,
    revisionDueAt: r.revision_due_at,
    revisionTurnId: r.revision_turn_id,
  };
}

/** Extra conditions of a conditional update: the row must still hold these values. */
export interface Guard {
  statuses: readonly string[];
  autoResolveAt?: number;
  snoozedUntil?: number;
  version?: number;
  revisionTurnId?: string | null;
  ladderChecked?: boolean;
}

/** The earliest wake still to come of the account's ($1) snoozed cards, after now (`$n`); computed once per statement. */
const nextWakeSql = (now: string) =>
  `SELECT min(w.snoozed_until) FROM review_cards w WHERE w.account_id = $1 AND w.status = 'snoozed' AND w.snoozed_until > ${now}`;

async function insertCard(q: Queryable, c: NewCard): Promise<Card> {
  const at = c.createdAt ?? Date.now();
  const [row] = await q('review_cards')
    .insert({
      id: c.id,
      account_id: c.accountId,
      kind: c.kind,
      source_type: c.sourceType,
      status: c.status ?? 'pending',
      title: c.title,
      prompt: c.prompt ?? '',
      summary: c.summary ?? '',
      detail: json(c.detail),
      priority: c.priority ?? 'normal',
      options: json(c.options),
      text_input: json(c.textInput),
      budget_change: json(c.budgetChange),
      ...payloadColumns(c.payload),
      actions: c.actions,
      primary_label: c.primaryLabel,
      auto_resolve_at: c.autoResolveAt ?? null,
      due_at: c.dueAt ?? null,
      snoozed_until: c.snoozedUntil ?? null,
      lead_id: c.leadId ?? null,
      lead_contact_id: c.leadContactId ?? null,
      post_id: c.postId ?? null,
      turn_id: c.turnId ?? null,
      created_at: at,
      updated_at: at,
      resolved_at: null,
      resolution: null,
      kind_of_work: c.kindOfWork ?? kindOfWorkFor({ sourceType: c.sourceType, payload: c.payload, budgetChange: c.budgetChange }),
      from_outside: c.fromOutside ?? false,
      ladder_checked: c.ladderChecked ?? false,
    })
    .returning('*');
  metrics.cardsCreated.inc({ kind: word(c.kind) });
  return toCard(row as CardRow);
}

async function transitionCard(
  q: Queryable,
  accountId: string,
  id: string,
  guard: Guard,
  changes: CardChanges,
  at: number,
): Promise<Card | null> {
  const query = q('review_cards').where({ account_id: accountId, id }).whereIn('status', guard.statuses);
  if (guard.autoResolveAt !== undefined) query.andWhere('auto_resolve_at', guard.autoResolveAt);
  if (guard.snoozedUntil !== undefined) query.andWhere('snoozed_until', guard.snoozedUntil);
  if (guard.version !== undefined) query.andWhere('version', guard.version);
  if (guard.revisionTurnId === null) query.whereNull('revision_turn_id');
  else if (guard.revisionTurnId !== undefined) query.andWhere('revision_turn_id', guard.revisionTurnId);
  if (guard.ladderChecked !== undefined) query.andWhere('ladder_checked', guard.ladderChecked);
  const row = toRow(changes, at);
  let moved = false;
  if (changes.status) {
    const current = await q('review_cards').where({ account_id: accountId, id }).first<CardRow | undefined>();
    if (!current) return null;
    moved = current.status !== changes.status;
    const shape = { ...shapeOf(current), status: changes.status, resolution: changes.resolution ?? current.resolution };
    row.actions = actionsFor(shape);
    row.primary_label = primaryLabelFor(shape);
  }
  const [updated] = await query.update(row).returning('*');
  // Decided: a move to another status that writes who decided (not a resolution rewritten in place).
  const by = (changes.resolution as { by?: unknown } | null | undefined)?.by;
  if (updated && moved && by) metrics.cardsDecided.inc({ kind: word((updated as CardRow).kind), decider: word(by) });
  return updated ? toCard(updated as CardRow) : null;
}

/**
 * The one writer of `review_cards`: `insert` and `transition` run through `cardWrite`, which bumps the
 * account's queue version around the statement so API processes drop their cached pages of the queue
 * (src/queue-version/card-writes.ts) and announces it once committed on the account's live stream
 * (`card.filed`, `card.updated` with who acted). test/architecture/imports.test.ts fails on a card write elsewhere.
 */
export function cardsRepository(q: Queryable) {
  return {
    insert: (c: NewCard): Promise<Card> => cardWrite(q, c.accountId, () => insertCard(q, c), filed),
    /**
     * Retention: deletes at most `limit` cards resolved, sent or dismissed before `before` (one statement); none of
     * them is in a queue, so no queue version moves. A waiting or not-yet-sent card is never touched.
     */
    async deleteFinished(before: number, limit: number): Promise<number> {
      const { rowCount } = (await q.raw(
        `DELETE FROM review_cards WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM review_cards WHERE status IN ('resolved', 'sent', 'dismissed') AND resolved_at < ? LIMIT ?))`,
        [before, limit],
      )) as { rowCount: number };
      return rowCount;
    },
    /** Cards in the queue (`pending`, `needs_revision`, not snoozed), newest first. */
    async listWaiting(accountId: string, limit: number, now = Date.now()): Promise<Card[]> {
      const rows: CardRow[] = await q('review_cards')
        .where({ account_id: accountId })
        .whereIn('status', ['pending', 'needs_revision'])
        .andWhere((w) => w.whereNull('snoozed_until').orWhere('snoozed_until', '<=', now))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit);
      return rows.map(toCard);
    },
    async countWaiting(accountId: string, now = Date.now()): Promise<number> {
      const row = await q('review_cards')
        .where({ account_id: accountId })
        .whereIn('status', ['pending', 'needs_revision'])
        .andWhere((w) => w.whereNull('snoozed_until').orWhere('snoozed_until', '<=', now))
        .count<{ count: string }[]>('* as count')
        .first();
      return Number(row?.count ?? 0);
    },
    async find(accountId: string, id: string): Promise<Card | null> {
      const row: CardRow | undefined = await q('review_cards').where({ account_id: accountId, id }).first();
      return row ? toCard(row) : null;
    },
    /**
     * The conditional update of docs/rules.md ("State changes are conditional updates"): changes the card
     * only while it still matches `guard`.
     * Returns the changed card, or null when someone else changed it first (the caller lost the race).
     * `actedBy` names who acted for the live stream (a person's name or token label, `timer`); without it the
     * decision's `by` says (the trust ladder, an approval setting), else `the service`.
     */
    transition: (
      accountId: string,
      id: string,
      guard: Guard,
      changes: CardChanges,
      at = Date.now(),
      actedBy?: ActedBy,
    ): Promise<Card | null> =>
      cardWrite(
        q,
        accountId,
        () => transitionCard(q, accountId, id, guard, changes, at),
        (card) => updated(card, changes, actedBy),
      ),
    /**
     * The queue read of `GET /review` in one prepared statement: the cards in `statuses`, plus any snoozed
     * card whose time has come (ordered as it will be once woken: the order never depends on status).
     * The caller wakes and reads again only when such a card is in the page. Each card comes back as
     * Postgres renders it (QUEUE_CARD_JSON), beside the few columns its computed fields are made from,
     * and `nextWake`: the earliest time after `now` a snoozed card of the account wakes (null: none;
     * undefined when the page is empty, see `nextWake`), which a cached page must not outlive.
     */
    async queuePage(accountId: string, statuses: readonly string[], limit: number, now: number) {
      const rows = await preparedQuery<QueueRowRaw & { next_wake: number | null }>(q, {
        name: 'review-queue-page-json',
        text:
          `SELECT ${QUEUE_ROW_SELECT}, (${nextWakeSql('$3')}) AS next_wake FROM review_cards r ` +
          `WHERE r.account_id = $1 AND (r.status = ANY($2) OR (r.status = 'snoozed' AND r.snoozed_until <= $3)) ` +
          `ORDER BY ${PRIORITY_ORDER_SQL} ASC, r.created_at DESC, r.id DESC LIMIT $4`,
        values: [accountId, statuses, now, limit],
      });
      return { cards: rows.map(toQueueRow), nextWake: rows.length ? (rows[0]!.next_wake ?? null) : undefined };
    },
    /** The earliest time after `now` a snoozed card of the account wakes, or null. */
    async nextWake(accountId: string, now: number): Promise<number | null> {
      const rows = await preparedQuery<{ next_wake: number | null }>(q, {
        name: 'review-queue-next-wake',
        text: `SELECT (${nextWakeSql('$2')}) AS next_wake`,
        values: [accountId, now],
      });
      return rows[0]?.next_wake ?? null;
    },
    /** One card of any status, rendered as the queue page renders it (`GET /review/{id}`). */
    async findJson(accountId: string, id: string): Promise<QueueRow | null> {
      const rows = await preparedQuery<QueueRowRaw>(q, {
        name: 'review-card-json',
        text: `SELECT ${QUEUE_ROW_SELECT} FROM review_cards r WHERE r.account_id = $1 AND r.id = $2`,
        values: [accountId, id],
      });
      return rows[0] ? toQueueRow(rows[0]) : null;
    },
    /** Snoozed cards of the account whose time has come (the wake-up job's work, also done on read). */
    async snoozedDue(accountId: string, now: number): Promise<Array<{ id: string; snoozedUntil: number }>> {
      const rows: { id: string; snoozed_until: number }[] = await q('review_cards')
        .where({ account_id: accountId, status: 'snoozed' })
        .andWhere('snoozed_until', '<=', now)
        .select('id', 'snoozed_until');
      return rows.map((r) => ({ id: r.id, snoozedUntil: r.snoozed_until }));
    },
    /** Ids of cards a timer should have acted on by `now` (the repair sweep). */
    async due(now: number, limit: number) {
      const pick = (rows: { id: string; account_id: string }[]) => rows.map((r) => ({ id: r.id, accountId: r.account_id }));
      return {
        unchecked: pick(
          await q('review_cards').where({ status: 'pending', ladder_checked: false }).select('id', 'account_id').limit(limit),
        ),
        autoResolve: pick(
          await q('review_cards').where('status', 'pending').andWhere('auto_resolve_at', '<=', now).select('id', 'account_id').limit(limit),
        ),
        snoozed: pick(
          await q('review_cards').where('status', 'snoozed').andWhere('snoozed_until', '<=', now).select('id', 'account_id').limit(limit),
        ),
        revision: pick(
          await q('review_cards')
            .where('status', 'needs_revision')
            .andWhere('revision_due_at', '<=', now)
            .select('id', 'account_id')
            .limit(limit),
        ),
      };
    },
    async listByTurn(accountId: string, turnId: string): Promise<Card[]> {
      const rows: CardRow[] = await q('review_cards').where({ account_id: accountId, turn_id: turnId }).orderBy('created_at');
      return rows.map(toCard);
    },
  };
}
