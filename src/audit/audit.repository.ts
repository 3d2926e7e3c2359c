import type { Queryable } from '../db.js';

/**
 * Who is writing: a token through the API, an operator through the admin CLI, or a signed-in person through
 * the dashboard (`person`: its session's id stands where a token's would, never the cookie's secret).
 */
export interface Actor {
  accountId: string;
  actor: 'api' | 'admin' | 'person';
  tokenId: string | null;
  tokenLabel: string | null;
  method: string;
  /** The route pattern (`POST /api/v1/review/{id}/send`) or the CLI verb (`token mint`). */
  route: string;
  /** The person who wrote (a dashboard session, or a token a person holds); absent or null otherwise. */
  personId?: string | null;
  /** Their sign-in address at the time of the write, so the log still says who after they are removed. */
  personEmail?: string | null;
  /** Their name, for what names who acted as it happens (the review queue's live stream); not stored in the log. */
  personName?: string | null;
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
  actor: Actor['actor'];
  token_id: string | null;
  token_label: string | null;
  method: string;
  route: string;
  target_id: string | null;
  status: number;
  at: number;
  person_id: string | null;
  person_email: string | null;
}

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
        person_id: e.personId ?? null,
        person_email: e.personEmail ?? null,
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
        personId: r.person_id,
        personEmail: r.person_email,
      }));
    },
  };
}
