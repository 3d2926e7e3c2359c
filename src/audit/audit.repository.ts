import type { Queryable } from '../db.js';

/** Who is writing: a token through the API, or an operator through the admin CLI. */
export interface Actor {
  accountId: string;
  actor: 'api' | 'admin';
  tokenId: string | null;
  tokenLabel: string | null;
  method: string;
  /** The route pattern (`POST /api/v1/review/{id}/send`) or the CLI verb (`token mint`). */
  route: string;
}

/** One audited write: who, what it touched, how it ended, when. */
export interface AuditEntry extends Actor {
  targetId: string | null;
  status: number;
  at: number;
}

interface AuditRow {
  id: number;
  account_id: string;
  actor: 'api' | 'admin';
  token_id: string | null;
  token_label: string | null;
  method: string;
  route: string;
  target_id: string | null;
  status: number;
  at: number;
}

/**
 * SQL text: the head of an insert of audit rows, for a statement of another area that must write its audit row in
 * the same round trip (the agent's recorded API message: src/agent/core/turn-statements.ts). The caller follows it
 * with a SELECT or VALUES of these columns, in this order.
 */
export const INSERT_AUDIT_ROWS_SQL =
  'INSERT INTO audit_log (account_id, actor, token_id, token_label, method, route, target_id, status, at)';

export function auditRepository(q: Queryable) {
  return {
    async insert(e: AuditEntry): Promise<void> {
      await q('audit_log').insert({
        account_id: e.accountId,
        actor: e.actor,
        token_id: e.tokenId,
        token_label: e.tokenLabel,
        method: e.method,
        route: e.route,
        target_id: e.targetId,
        status: e.status,
        at: e.at,
      });
    },
    /** The newest row of `route` for `targetId` gets `status` (the row was written before the answer was known). */
    async setStatus(accountId: string, route: string, targetId: string, status: number): Promise<void> {
      const newest = q('audit_log')
        .where({ account_id: accountId, route, target_id: targetId })
        .orderBy('id', 'desc')
        .limit(1)
        .select('id');
      await q('audit_log').where({ account_id: accountId }).where('id', newest).update({ status });
    },
    async list(accountId: string, limit: number): Promise<Array<AuditEntry & { id: string }>> {
      const rows: AuditRow[] = await q('audit_log').where({ account_id: accountId }).orderBy('id', 'desc').limit(limit);
      return rows.map((r) => ({
        id: String(r.id),
        accountId: r.account_id,
        actor: r.actor,
        tokenId: r.token_id,
        tokenLabel: r.token_label,
        method: r.method,
        route: r.route,
        targetId: r.target_id,
        status: r.status,
        at: r.at,
      }));
    },
  };
}
