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
        .select('h.*', q('webhook_deliveries as d').max('d.at').where('d.hook_id', q.ref('h.id')).as('last_delivery_at'))
        .orderBy('h.created_at')
        .orderBy('h.id');
      return rows.map((r) => ({ ...toHook(r), lastDeliveryAt: r.last_delivery_at === null ? null : Number(r.last_delivery_at) }));
    },
    /**
     * Intake's one Postgres statement: finds the active hook by token hash (the partial index holds
     * only active hooks, so unknown, disabled and regenerated tokens are the same miss) and logs the
     * delivery as Accepted in the same statement. Null when no live hook has that token.
     */
    async insertForToken(tokenHash: string, d: { id: string; at: number; bytes: number; body: string }): Promise<{ hookId: string; accountId: string } | null> {
      const rows = await preparedQuery<{ account_id: string; hook_id: string }>(q, {
        name: 'webhook-delivery-by-token',
        text: `INSERT INTO webhook_deliveries (id, account_id, hook_id, at, outcome, bytes, body)
               SELECT $2, h.account_id, h.id, $3, 'Accepted', $4, $5 FROM webhook_hooks h
                WHERE h.token_hash = $1 AND h.status = 'active'
               RETURNING account_id, hook_id`,
        values: [tokenHash, d.id, d.at, d.bytes, d.body],
      });
      const row = rows[0];
      return row ? { hookId: row.hook_id, accountId: row.account_id } : null;
    },
    /** Accepted → Rate Limited: over a limit, so it is not handed on and its body is not kept. */
    async markRateLimited(deliveryId: string): Promise<void> {
      await q('webhook_deliveries').where({ id: deliveryId, outcome: 'Accepted' }).whereNull('turn_id').update({ outcome: 'Rate Limited', body: null });
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
    async markWorkerError(deliveryId: string, error: string): Promise<boolean> {
      const n = await q('webhook_deliveries').where({ id: deliveryId, outcome: 'Accepted' }).whereNull('turn_id').update({ outcome: 'Worker Error', error });
      return n > 0;
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
      const n = await q('webhook_deliveries').where({ account_id: accountId, id: deliveryId }).whereNull('turn_id').update({ turn_id: turnId });
      return n > 0;
    },
    async listDeliveries(hookId: string, limit: number): Promise<Delivery[]> {
      const rows: DeliveryRow[] = await q('webhook_deliveries').where({ hook_id: hookId }).orderBy('at', 'desc').orderBy('id', 'desc').limit(limit);
      return rows.map(toDelivery);
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
