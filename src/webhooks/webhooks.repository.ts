import { preparedQuery, type Queryable } from '../db.js';
import type { Delivery, Hook, HookStatus, Outcome } from './webhooks.types.js';

interface HookRow {
  id: string;
  account_id: string;
  label: string;
  status: HookStatus;
  created_at: number;
  updated_at: number;
}

interface DeliveryRow {
  id: string;
  account_id: string;
  hook_id: string;
  at: number;
  outcome: Outcome;
  bytes: number;
  body: string | null;
  replay_of: string | null;
  turn_id: string | null;
  error: string | null;
  deliveries: number;
  last_at: number | null;
}

const toHook = (r: HookRow): Hook => ({
  hookId: r.id,
  accountId: r.account_id,
  label: r.label,
  status: r.status,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toDelivery = (r: DeliveryRow): Delivery => ({
  deliveryId: r.id,
  accountId: r.account_id,
  hookId: r.hook_id,
  at: r.at,
  outcome: r.outcome,
  bytes: r.bytes,
  body: r.body,
  replayOf: r.replay_of,
  turnId: r.turn_id,
  error: r.error,
  deliveries: r.deliveries,
  lastAt: r.last_at,
});

export interface NewDelivery {
  id: string;
  accountId: string;
  hookId: string;
  at: number;
  outcome: Outcome;
  bytes: number;
  body: string | null;
  replayOf: string | null;
  error: string | null;
}

/** Hooks and their delivery log. Admin lookups go by hook id; intake goes by token hash only. */
export function webhooksRepository(q: Queryable) {
  return {
    async insertHook(h: { id: string; accountId: string; label: string; tokenHash: string; at: number }): Promise<void> {
      await q('webhook_hooks').insert({
        id: h.id,
        account_id: h.accountId,
        label: h.label,
        token_hash: h.tokenHash,
        status: 'active',
        created_at: h.at,
        updated_at: h.at,
      });
    },
    async findHook(hookId: string, lock = false): Promise<Hook | null> {
      let query = q('webhook_hooks').where({ id: hookId }).first<HookRow | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? toHook(row) : null;
    },
    /** The hook's token hash, to tell intake's registry which token a status change concerns. */
    async tokenHashOf(hookId: string): Promise<string | null> {
      const row = await q('webhook_hooks').where({ id: hookId }).first<{ token_hash: string } | undefined>('token_hash');
      return row?.token_hash ?? null;
    },
    async countActive(accountId: string): Promise<number> {
      const rows = await q('webhook_hooks').where({ account_id: accountId, status: 'active' }).count<{ n: string }[]>({ n: '*' });
      return Number(rows[0]?.n ?? 0);
    },
    async setStatus(accountId: string, hookId: string, status: HookStatus, at: number): Promise<void> {
      await q('webhook_hooks').where({ account_id: accountId, id: hookId }).update({ status, updated_at: at });
    },
    async setTokenHash(accountId: string, hookId: string, tokenHash: string, at: number): Promise<void> {
      await q('webhook_hooks').where({ account_id: accountId, id: hookId }).update({ token_hash: tokenHash, updated_at: at });
    },
    async deleteHook(accountId: string, hookId: string): Promise<void> {
      await q('webhook_hooks').where({ account_id: accountId, id: hookId }).delete();
    },
    async listHooks(accountId: string): Promise<(Hook & { lastDeliveryAt: number | null })[]> {
      const rows: (HookRow & { last_delivery_at: number | null })[] = await q('webhook_hooks as h')
        .where({ 'h.account_id': accountId })
        .select(
          'h.*',
          q('webhook_deliveries as d').max(q.raw('coalesce(d.last_at, d.at)')).where('d.hook_id', q.ref('h.id')).as('last_delivery_at'),
        )
        .orderBy('h.created_at')
        .orderBy('h.id');
      return rows.map((r) => ({ ...toHook(r), lastDeliveryAt: r.last_delivery_at === null ? null : Number(r.last_delivery_at) }));
    },
    /**
     * Intake's one Postgres statement, for every delivery of a batch at once: finds each active hook
     * by token hash (the partial index holds only active hooks, so unknown, disabled and regenerated
     * tokens are the same miss) and logs the delivery as Accepted, all in one statement and one
     * commit. Answers by position: the hook, or null when no live hook has that token.
     */
    async insertForTokens(
      ds: { tokenHash: string; id: string; at: number; bytes: number; body: string }[],
    ): Promise<({ hookId: string; accountId: string } | null)[]> {
      const rows = await preparedQuery<{ id: string; account_id: string; hook_id: string }>(q, {
        name: 'webhook-deliveries-by-token',
        text: `INSERT INTO webhook_deliveries (id, account_id, hook_id, at, outcome, bytes, body)
               SELECT v.id, h.account_id, h.id, v.at, 'Accepted', v.bytes, v.body
                 FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::text[]) AS v(token_hash, id, at, bytes, body)
                 JOIN webhook_hooks h ON h.token_hash = v.token_hash AND h.status = 'active'
               RETURNING id, account_id, hook_id`,
        values: [ds.map((d) => d.tokenHash), ds.map((d) => d.id), ds.map((d) => d.at), ds.map((d) => d.bytes), ds.map((d) => d.body)],
      });
      const found = new Map(rows.map((r) => [r.id, { hookId: r.hook_id, accountId: r.account_id }]));
      return ds.map((d) => found.get(d.id) ?? null);
    },
    /**
     * Counts refused deliveries, already gathered by token and minute, onto their hook's refusals row
     * for that minute (one row per hook per minute, however many were refused), in one statement.
     * Joins on the active hook like the insert, so a token no live hook has counts nowhere. Returns
     * the `hookId minute` of each row it counted on.
     */
    async countRefusals(
      groups: { tokenHash: string; id: string; minute: number; at: number; lastAt: number; bytes: number; n: number }[],
    ): Promise<Set<string>> {
      const rows = await preparedQuery<{ hook_id: string; minute: number }>(q, {
        name: 'webhook-refusals-by-token',
        text: `INSERT INTO webhook_deliveries AS d (id, account_id, hook_id, at, outcome, bytes, body, deliveries, minute, last_at)
               SELECT v.id, h.account_id, h.id, v.at, 'Rate Limited', v.bytes, NULL, v.n, v.minute, v.last_at
                 FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::int[], $7::int[])
                      AS v(token_hash, id, minute, at, last_at, bytes, n)
                 JOIN webhook_hooks h ON h.token_hash = v.token_hash AND h.status = 'active'
               ON CONFLICT (account_id, hook_id, minute) WHERE minute IS NOT NULL DO UPDATE
                 SET deliveries = d.deliveries + excluded.deliveries, at = LEAST(d.at, excluded.at),
                     last_at = GREATEST(d.last_at, excluded.last_at), bytes = GREATEST(d.bytes, excluded.bytes)
               RETURNING hook_id, minute`,
        values: [
          groups.map((g) => g.tokenHash),
          groups.map((g) => g.id),
          groups.map((g) => g.minute),
          groups.map((g) => g.at),
          groups.map((g) => g.lastAt),
          groups.map((g) => g.bytes),
          groups.map((g) => g.n),
        ],
      });
      return new Set(rows.map((r) => `${r.hook_id} ${Number(r.minute)}`));
    },
    /** Accepted → Rate Limited: over a limit, so it is not handed on and its body is not kept. */
    async markRateLimited(deliveryIds: string[]): Promise<void> {
      await q('webhook_deliveries')
        .whereIn('id', deliveryIds)
        .andWhere({ outcome: 'Accepted' })
        .whereNull('turn_id')
        .update({ outcome: 'Rate Limited', body: null });
    },
    async insertDelivery(d: NewDelivery): Promise<void> {
      await preparedQuery(q, {
        name: 'webhook-delivery-insert',
        text: `INSERT INTO webhook_deliveries (id, account_id, hook_id, at, outcome, bytes, body, replay_of, error)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        values: [d.id, d.accountId, d.hookId, d.at, d.outcome, d.bytes, d.body, d.replayOf, d.error],
      });
    },
    /** Accepted → Worker Error (the agent could not be woken, or the worker gave up). */
    async markWorkerError(deliveryIds: string[], error: string): Promise<number> {
      return q('webhook_deliveries')
        .whereIn('id', deliveryIds)
        .andWhere({ outcome: 'Accepted' })
        .whereNull('turn_id')
        .update({ outcome: 'Worker Error', error });
    },
    async findDelivery(deliveryId: string, lock = false): Promise<Delivery | null> {
      let query = q('webhook_deliveries').where({ id: deliveryId }).first<DeliveryRow | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? toDelivery(row) : null;
    },
    /**
     * The deliveries a batch of webhook-events jobs hands over, with their hook's label, locked in id
     * order (two batches naming the same delivery wait for each other instead of deadlocking).
     */
    async lockForHanding(deliveryIds: string[]): Promise<(Delivery & { label: string | null })[]> {
      const { rows } = (await q.raw(
        `SELECT d.*, h.label FROM webhook_deliveries d LEFT JOIN webhook_hooks h ON h.id = d.hook_id
          WHERE d.id = ANY(?::text[]) ORDER BY d.id FOR UPDATE OF d`,
        [deliveryIds],
      )) as { rows: (DeliveryRow & { label: string | null })[] };
      return rows.map((r) => ({ ...toDelivery(r), label: r.label }));
    },
    /** Links each delivery to its turn in one statement; conditional like setTurn. */
    async setTurns(links: { deliveryId: string; turnId: string }[]): Promise<number> {
      if (!links.length) return 0;
      const { rowCount } = (await q.raw(
        `UPDATE webhook_deliveries d SET turn_id = v.turn_id
           FROM unnest(?::text[], ?::text[]) AS v(id, turn_id)
          WHERE d.id = v.id AND d.turn_id IS NULL`,
        [links.map((l) => l.deliveryId), links.map((l) => l.turnId)],
      )) as { rowCount: number };
      return rowCount;
    },
    /** Links the turn; conditional, so of two runs of the same job only the first links one. */
    async setTurn(accountId: string, deliveryId: string, turnId: string): Promise<boolean> {
      const n = await q('webhook_deliveries')
        .where({ account_id: accountId, id: deliveryId })
        .whereNull('turn_id')
        .update({ turn_id: turnId });
      return n > 0;
    },
    async listDeliveries(hookId: string, limit: number): Promise<Delivery[]> {
      const rows: DeliveryRow[] = await q('webhook_deliveries')
        .where({ hook_id: hookId })
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit);
      return rows.map(toDelivery);
    },
    /**
     * Deletes up to `limit` deliveries logged before `before`, except accepted ones not yet handed to
     * the agent (the sweeper still owes them a job). Walks hook by hook on the (hook_id, at) index,
     * so intake's insert pays for no extra index. Returns how many it deleted.
     */
    async pruneBefore(before: number, limit: number): Promise<number> {
      const { rowCount } = (await q.raw(
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT d.id FROM webhook_hooks h
             CROSS JOIN LATERAL (
               SELECT id FROM webhook_deliveries
                WHERE hook_id = h.id AND at < ? AND NOT (outcome = 'Accepted' AND turn_id IS NULL)
                ORDER BY at LIMIT ?
             ) d
            LIMIT ?)`,
        [before, limit, limit],
      )) as { rowCount: number };
      return rowCount;
    },
    /**
     * Whether the account has an event accepted at a hook URL since `since` that is not handed to the agent yet (its
     * job waits for a worker, or was in a worker that died): the agent's status counts it as work waiting. The
     * partial index holds only those.
     */
    async waitingForAgent(accountId: string, since: number): Promise<boolean> {
      return Boolean(
        await q('webhook_deliveries')
          .where({ account_id: accountId, outcome: 'Accepted' })
          .whereNull('turn_id')
          .andWhere('at', '>', since)
          .first('id'),
      );
    },
    /** Accepted deliveries older than `before` that no turn was recorded for: their job never ran. */
    async unhanded(before: number, limit: number): Promise<string[]> {
      const rows: { id: string }[] = await q('webhook_deliveries')
        .where({ outcome: 'Accepted' })
        .whereNull('turn_id')
        .andWhere('at', '<', before)
        .orderBy('at')
        .limit(limit)
        .select('id');
      return rows.map((r) => r.id);
    },
  };
}
