import { behindPooler, withConnection, type Db, type PgConnection, type Runner } from '../../db.js';
import { RUNNER, turnStatements, type Claimed } from '../core/turn-statements.js';

/** Namespace of the per-account advisory lock (the other key is hashtext(account id)). */
const LOCK_NAMESPACE = 7301;

/**
 * Runs `fn` while holding the account's turn lock, one holder across every process; returns null at
 * once when another holder has it, otherwise whether the account had a runnable turn just after it was
 * let go. With `claim`, the account's first turn is claimed right after the lock is taken and handed to
 * `fn` (null otherwise). `fn` runs the turn's statements on the Runner it is given.
 *
 * Directly on Postgres the lock is a session-level advisory lock on one pooled connection, which also
 * runs the turn's statements (taking it with the first claim, and letting go with the runnable check,
 * are one round trip each). Behind a transaction pooler a session outlives no transaction, so the lock
 * is a transaction-level advisory lock in a transaction of its own, held open on one connection (and
 * so on one server connection of the pooler) for the turn, while the turn's statements go through the
 * pool and commit on their own (docs/decisions/stores.md, "Postgres behind a pooler"). Either way the lock
 * dies with its connection (a killed worker frees it), and a connection whose lock state is unknown (a
 * failed attempt or release) is closed rather than returned to the pool.
 */
export async function holdAccount(
  db: Db,
  accountId: string,
  claim: boolean,
  fn: (on: Runner, first: Claimed | null) => Promise<void>,
): Promise<{ runnable: boolean } | null> {
  return withConnection(db, async (conn, discard) => {
    const pooled = behindPooler(db);
    let first: Claimed | null = null;
    try {
      if (pooled) {
        if (!(await lockInTransaction(conn, accountId))) return null;
      } else if (claim) {
        const got = await turnStatements.lockAndClaim(conn, LOCK_NAMESPACE, accountId, Date.now(), RUNNER);
        if (!got) return null;
        first = got;
      } else if (!(await turnStatements.tryLock(conn, LOCK_NAMESPACE, accountId))) return null;
    } catch (err) {
      discard();
      throw err;
    }
    const on: Runner = pooled ? db : conn;
    let after = { released: false, runnable: false };
    try {
      if (pooled && claim) first = await turnStatements.claim(db, accountId, Date.now(), RUNNER);
      await fn(on, first);
    } finally {
      after = await (pooled
        ? releaseThenRunnable(db, conn, accountId)
        : turnStatements.unlockThenRunnable(conn, LOCK_NAMESPACE, accountId, Date.now())
      ).catch(() => after);
      if (!after.released) discard();
    }
    return { runnable: after.runnable };
  });
}

/** `holdAccount` without a first claim. */
export function withAccountLock(db: Db, accountId: string, fn: (on: Runner) => Promise<void>): Promise<{ runnable: boolean } | null> {
  return holdAccount(db, accountId, false, (on) => fn(on));
}

/** Opens the lock's transaction and tries the lock in it; when another holder has it, ends the transaction. */
async function lockInTransaction(conn: PgConnection, accountId: string): Promise<boolean> {
  await conn.query({ text: 'BEGIN' });
  if (await turnStatements.tryXactLock(conn, LOCK_NAMESPACE, accountId)) return true;
  await conn.query({ text: 'ROLLBACK' });
  return false;
}

/**
 * Ends the lock's transaction (which lets go of the lock), then asks, with a snapshot taken after it,
 * whether a turn is runnable.
 */
async function releaseThenRunnable(db: Db, conn: PgConnection, accountId: string): Promise<{ released: boolean; runnable: boolean }> {
  const released = await conn.query({ text: 'ROLLBACK' }).then(
    () => true,
    () => false,
  );
  const runnable = released && (await turnStatements.runnable(db, accountId, Date.now()).catch(() => false));
  return { released, runnable };
}
