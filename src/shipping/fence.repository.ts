import type { Queryable } from '../db.js';
import type { DecidedBy } from '../results/channel-events.js';

/** sending: fenced, provider being called · pending: answer lost, reconciling · unknown: a person decides. */
export type FenceStatus = 'sending' | 'sent' | 'pending' | 'not_sent' | 'unknown';

/** One shipment of a card's work, fenced before the adapter is called. */
export interface Fence {
  id: string;
  accountId: string;
  cardId: string;
  idempotencyKey: string;
  status: FenceStatus;
  /** The recipient (mail: an address); empty for work that has none. */
  to: string;
  subject: string;
  body: string;
  decidedBy: DecidedBy;
  /** Which adapter ships it (src/channels/registry.ts). */
  kindOfWork: string;
  /** Which piece of the card's work: 0, or a sequence's step (one live fence per card and step). */
  step: number;
  /** The adapter's own fields of the work (a mail reply's In-Reply-To, …). */
  details: Record<string, unknown>;
  providerId: string | null;
  attempts: number;
  lastError: string | null;
  reconcileUntil: number | null;
  questionCardId: string | null;
  createdAt: number;
  updatedAt: number;
  settledAt: number | null;
}

interface Row {
  id: string;
  account_id: string;
  card_id: string;
  idempotency_key: string;
  status: FenceStatus;
  to_address: string;
  subject: string;
  body: string;
  decided_by: DecidedBy;
  kind_of_work: string;
  step: number;
  details: Record<string, unknown> | null;
  provider_id: string | null;
  attempts: number;
  last_error: string | null;
  reconcile_until: number | null;
  question_card_id: string | null;
  created_at: number;
  updated_at: number;
  settled_at: number | null;
}

const toSend = (r: Row): Fence => ({
  id: r.id,
  accountId: r.account_id,
  cardId: r.card_id,
  idempotencyKey: r.idempotency_key,
  status: r.status,
  to: r.to_address,
  subject: r.subject,
  body: r.body,
  decidedBy: r.decided_by,
  kindOfWork: r.kind_of_work,
  step: r.step ?? 0,
  details: r.details ?? {},
  providerId: r.provider_id,
  attempts: r.attempts,
  lastError: r.last_error,
  reconcileUntil: r.reconcile_until,
  questionCardId: r.question_card_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  settledAt: r.settled_at,
});

export type FenceChanges = Partial<
  Pick<Fence, 'status' | 'providerId' | 'attempts' | 'lastError' | 'reconcileUntil' | 'questionCardId' | 'settledAt'>
>;

const COLUMNS: Record<keyof FenceChanges, string> = {
  status: 'status',
  providerId: 'provider_id',
  attempts: 'attempts',
  lastError: 'last_error',
  reconcileUntil: 'reconcile_until',
  questionCardId: 'question_card_id',
  settledAt: 'settled_at',
};

const DAY_MS = 24 * 60 * 60 * 1000;

/** Where a fence keeps its reply token sealed (the reseal verb walks it: src/admin/sealed-columns.ts). */
export const SEALED_FENCE_TOKENS = {
  table: 'shipments',
  column: 'details',
  field: 'replyTokenSealed',
  key: ['account_id', 'id'],
} as const;

/**
 * SQL text for a statement of another area that must read fences inside it (an experiment's counts, the fence that
 * published a post): fences as a table of (account_id, card_id, kind_of_work, status, settled_at, details,
 * provider_id), a subquery Postgres folds into the statement. Read-only.
 */
export const FENCES_SQL = '(SELECT account_id, card_id, kind_of_work, status, settled_at, details, provider_id FROM shipments)';

/**
 * The shipping fence: one live row per card, written in the transaction that claims the card, for any
 * kind of work: the `shipments` table (named `mail_sends` until migration 20261203150000; a view of that name
 * serves the previous release's processes for one release, docs/decisions/stores.md).
 */
export function fencesRepository(q: Queryable) {
  return {
    async insert(
      s: Pick<Fence, 'id' | 'accountId' | 'cardId' | 'idempotencyKey' | 'to' | 'subject' | 'body' | 'decidedBy'> &
        Partial<Pick<Fence, 'kindOfWork' | 'details' | 'step'>>,
      at: number,
    ): Promise<Fence> {
      const [row] = await q('shipments')
        .insert({
          id: s.id,
          account_id: s.accountId,
          card_id: s.cardId,
          idempotency_key: s.idempotencyKey,
          status: 'sending',
          to_address: s.to,
          subject: s.subject,
          body: s.body,
          decided_by: s.decidedBy,
          kind_of_work: s.kindOfWork ?? 'email',
          step: s.step ?? 0,
          details: s.details && Object.keys(s.details).length ? JSON.stringify(s.details) : null,
          created_at: at,
          updated_at: at,
        })
        .returning('*');
      return toSend(row as Row);
    },
    async find(accountId: string, id: string): Promise<Fence | null> {
      const row: Row | undefined = await q('shipments').where({ account_id: accountId, id }).first();
      return row ? toSend(row) : null;
    },
    /** The card's fence that still counts (anything but `not_sent`). */
    /** The fence of one piece of a card's work (step 0: the card's own; a sequence's later steps) that is not void. */
    async liveForCard(accountId: string, cardId: string, step = 0): Promise<Fence | null> {
      const row: Row | undefined = await q('shipments')
        .where({ account_id: accountId, card_id: cardId, step })
        .whereNot('status', 'not_sent')
        .first();
      return row ? toSend(row) : null;
    },
    /** How many times this step of a card's work was fenced and certainly not shipped. */
    async voidCount(accountId: string, cardId: string, step: number): Promise<number> {
      const row = await q('shipments')
        .where({ account_id: accountId, card_id: cardId, step, status: 'not_sent' })
        .count<{ n: string }[]>('* as n')
        .first();
      return Number(row?.n ?? 0);
    },
    /** Conditional update: only while the fence is in one of `from`; null when it was not. */
    async transition(accountId: string, id: string, from: FenceStatus[], changes: FenceChanges, at = Date.now()): Promise<Fence | null> {
      const row: Record<string, unknown> = { updated_at: at };
      for (const [k, v] of Object.entries(changes) as [keyof FenceChanges, unknown][]) if (v !== undefined) row[COLUMNS[k]] = v;
      const [updated] = await q('shipments').where({ account_id: accountId, id }).whereIn('status', from).update(row).returning('*');
      return updated ? toSend(updated as Row) : null;
    },
    /** Fences that need reconciliation: answer lost, or `sending` for longer than a send can take. */
    async unsettled(staleBefore: number, limit: number): Promise<Fence[]> {
      const rows: Row[] = await q('shipments')
        .where('status', 'pending')
        .orWhere((w) => w.where('status', 'sending').andWhere('updated_at', '<', staleBefore))
        .orderBy('updated_at')
        .limit(limit);
      return rows.map(toSend);
    },
    /**
     * The ad tests shipped at or before `until` whose duration was not over before `since`, oldest first, at most
     * `limit` (`/results` ads tests).
     */
    adTestsShipped: (accountId: string, since: number, until: number, limit: number) =>
      q('shipments')
        .where({ account_id: accountId, kind_of_work: 'ad_test', status: 'sent' })
        .whereNotNull('provider_id')
        .where('settled_at', '<=', until)
        .whereRaw(`settled_at + coalesce((details->>'durationDays')::bigint, 0) * ? >= ?`, [DAY_MS, since])
        .orderBy('settled_at')
        .limit(limit)
        .select('provider_id', 'card_id', 'subject', 'settled_at', 'details') as unknown as Promise<
        { provider_id: string; card_id: string; subject: string; settled_at: string | number; details: Record<string, unknown> | null }[]
      >,
    /** Up to `limit` fences whose details still hold the reply token in clear (kept so by the previous version). */
    async plainTokenFences(limit: number): Promise<{ accountId: string; id: string; token: string }[]> {
      const rows = (await q('shipments')
        .select('account_id', 'id', q.raw(`details->>'replyToken' AS token`))
        .whereRaw(`details->>'replyToken' IS NOT NULL`)
        .orderBy(['account_id', 'id'])
        .limit(limit)) as { account_id: string; id: string; token: string | null }[];
      return rows.map((r) => ({ accountId: r.account_id, id: r.id, token: r.token ?? '' }));
    },
    /** Swaps a fence's plaintext reply token for its sealed copy, if it still holds `token`; true when swapped. */
    async sealFenceToken(f: { accountId: string; id: string; token: string }, sealed: string): Promise<boolean> {
      const n = await q('shipments')
        .where({ account_id: f.accountId, id: f.id })
        .whereRaw(`coalesce(details->>'replyToken', '') = ?`, [f.token])
        .update({ details: q.raw(`(details - 'replyToken') || jsonb_build_object('replyTokenSealed', ?::text)`, [sealed]) });
      return n > 0;
    },
    /**
     * The sum of the increases (`details.amount` above 0, minor units) of the account's fences of this kind fenced
     * since `since` that are not void (`not_sent`), in flight or shipped: the spend this month the monthly cap counts
     * (src/channels/spend-cap.ts `checkSpendCap`, handed it as `EarlierFences`).
     */
    async increasesSince(accountId: string, kind: string, since: number): Promise<number> {
      const row = (await q('shipments')
        .where({ account_id: accountId, kind_of_work: kind })
        .whereNot({ status: 'not_sent' })
        .where('created_at', '>=', since)
        .select(q.raw(`coalesce(sum(greatest((details->>'amount')::bigint, 0)), 0) as used`))
        .first()) as { used: string | number };
      return Number(row.used);
    },
    /** When the oldest send whose provider answer is lost was fenced: `pending` while reconciled, `unknown` once a person must decide. */
    async oldestLostAnswer(): Promise<number | null> {
      const { rows } = (await q.raw(`select min(created_at) as oldest from shipments where status in ('pending', 'unknown')`)) as {
        rows: { oldest: string | number | null }[];
      };
      const oldest = rows[0]?.oldest;
      return oldest == null ? null : Number(oldest);
    },
  };
}
