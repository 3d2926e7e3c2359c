import type { Db, Queryable, Trx } from '../db.js';
import { auditRepository, type Actor, type AuditEntry } from './audit.repository.js';

export type { Actor };

/** An operator's CLI verb, recorded against the account it changes. */
export function adminActor(accountId: string, verb: string): Actor {
  return { accountId, actor: 'admin', tokenId: null, tokenLabel: null, method: 'CLI', route: verb };
}

/** Runs `fn` in a transaction and records the write in the audit log inside that same transaction. */
export async function auditedWrite<T>(
  db: Db,
  actor: Actor,
  fn: (trx: Trx) => Promise<{ result: T; targetId: string | null; status?: number }>,
): Promise<T> {
  return db.transaction(async (trx) => {
    const { result, targetId, status } = await fn(trx);
    await recordAudit(trx, actor, targetId, status ?? 200);
    return result;
  });
}

/** Records one write; call it with the transaction that made the write. */
export async function recordAudit(q: Queryable, actor: Actor, targetId: string | null, status: number): Promise<void> {
  const entry: AuditEntry = { ...actor, targetId, status, at: Date.now() };
  await auditRepository(q).insert(entry);
}

/**
 * Sets the status of a write's audit row once its answer is known, for a write recorded before the
 * request finished (a message that then waited for its reply and answered 200, not 202).
 */
export async function settleAuditStatus(q: Queryable, actor: Actor, targetId: string, status: number): Promise<void> {
  await auditRepository(q).setStatus(actor.accountId, actor.route, targetId, status);
}

export function listAudit(db: Db, accountId: string, limit: number) {
  return auditRepository(db).list(accountId, limit);
}
