import type { Db } from '../../src/db.js';
import { waitFor } from './processes.js';

/**
 * Holds an ACCESS EXCLUSIVE lock on `table` (every read of it waits) until `release`. `blocked` waits
 * until some other session of this database (databases cloned from one template share table oids) is
 * waiting on it: the event that proves a statement on the table has begun, without timing.
 */
export async function holdTable(
  db: Db,
  table: string,
): Promise<{ blocked: () => Promise<void>; waiting: () => Promise<boolean>; release: () => Promise<void> }> {
  const trx = await db.transaction();
  await trx.raw(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  let released = false;
  const waiting = async () => {
    const { rows } = await db.raw<{ rows: { n: number }[] }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
       WHERE NOT l.granted AND c.relname = ? AND l.pid <> pg_backend_pid()
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [table],
    );
    return (rows[0]?.n ?? 0) > 0;
  };
  return {
    blocked: () => waitFor(waiting, `a statement waiting on ${table}`),
    /** Whether some statement waits on the table right now (one look). */
    waiting,
    /** Idempotent, so a test can release in `finally` too. */
    release: async () => {
      if (released) return;
      released = true;
      await trx.commit();
    },
  };
}
