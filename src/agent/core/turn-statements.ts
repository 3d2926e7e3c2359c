import { hostname } from 'node:os';
import { INSERT_AUDIT_ROWS_SQL } from '../../audit/audit.repository.js';
import { run, type PgConnection, type Runner, type Statement } from '../../db.js';
import type { Bubble, Turn } from './agent.types.js';
import { toBubbles, toTurn, type NewTurn, type TurnRow } from './turn-rows.js';

/**
 * The turn's hot path, one named prepared statement per step, every value a bound parameter
 * (docs/decisions/agent.md, "Agent round trip" and "Agent turns: statements and functions"): recording a
 * turn, taking the account's lock with the first claim, a claim, finishing and letting go each take a
 * single round trip. Reads and writes off this path go through the query builder (turns.repository.ts).
 */

/**
 * A select-list item that makes the statement's own (implicit) transaction commit without waiting for
 * the WAL flush: `SET LOCAL synchronous_commit = off` for that statement only (the setting is read at
 * commit, and a local setting ends with the transaction). Used for a running turn's bookkeeping (the
 * claim, reply bubbles); the next synchronous commit (the turn's finish, any tool's write) flushes
 * everything before it. A Postgres crash can lose only such a tail: a running turn then reads as queued
 * again, with nothing of it kept, and runs again; no finished answer is ever lost.
 */
export const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true)`;

/** This process, as recorded on the turns it claims. */
export const RUNNER = `${hostname()}-${process.pid}`;

/**
 * Also writes the audit row of an API message (the audit area's table, by its INSERT_AUDIT_ROWS_SQL) in this statement: the message,
 * its activity and its audit row commit in the one round trip the API spends on a plain message
 * (docs/decisions/agent.md, "Agent turns: statements and functions").
 */
const RECORD: Statement = {
  name: 'agent-turn-record',
  text:
    `WITH ins AS (
    INSERT INTO agent_turns (id, account_id, kind, origin, token_id, client_request_id, text, data, mode, status, ` +
    `created_at, not_before, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, 'queued', $10::bigint, $11::bigint, $12::bigint)
    ON CONFLICT (account_id, token_id, client_request_id) WHERE client_request_id IS NOT NULL DO NOTHING
    RETURNING *
  ), flagged AS (
    UPDATE agent_turns SET interrupt_requested_at = $10::bigint
    WHERE $13::boolean AND account_id = $2 AND status = 'running' AND interrupt_requested_at IS NULL AND EXISTS (SELECT 1 FROM ins)
    RETURNING id
  ), state AS (
    INSERT INTO agent_state (account_id, last_activity_at, last_turn_at) SELECT $2, $10::bigint, NULL FROM ins
    ON CONFLICT (account_id) DO UPDATE SET last_activity_at = GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)
  ), audit AS (
    ${INSERT_AUDIT_ROWS_SQL}
    SELECT $2, $14::text, $15::text, $16::text, $17::text, $18::text, ins.id, $19::int, $10::bigint FROM ins WHERE $14::text IS NOT NULL
  )
  SELECT ins.*, ARRAY(SELECT id FROM flagged) AS interrupting FROM ins`,
};

/** agent_claim_turn (migration 20261123150030): with a lock namespace it tries the lock first. */
const CLAIM: Statement = {
  name: 'agent-turn-claim',
  text: 'SELECT orphans, memory, turn FROM agent_claim_turn($1, $2::bigint, $3, $4::int, NULL)',
};
const LOCK_AND_CLAIM: Statement = {
  name: 'agent-turn-lock-and-claim',
  text: 'SELECT orphans, memory, turn FROM agent_claim_turn($1, $2::bigint, $3, $4::int, $5::int)',
};

const FINISH: Statement = {
  name: 'agent-turn-finish',
  text: `WITH done AS (
    UPDATE agent_turns SET status = $3, failure = $4, interrupted = $5, finished_at = $6::bigint
    WHERE account_id = $1 AND id = $2 AND status IN ('queued', 'running')
    RETURNING *
  ), state AS (
    INSERT INTO agent_state (account_id, last_activity_at, last_turn_at) SELECT $1, $6::bigint, NULL FROM done
    ON CONFLICT (account_id) DO UPDATE SET last_activity_at = GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)
  )
  SELECT done.*,
    (SELECT json_agg(json_build_object('text', r.text, 'at', r.at) ORDER BY r.id) FROM
      (SELECT id, text, at FROM agent_replies WHERE turn_id = $2 ORDER BY id DESC LIMIT $7) r) AS replies,
    EXISTS (SELECT 1 FROM agent_turns WHERE account_id = $1 AND status = 'queued' AND not_before <= $6::bigint) AS more
  FROM done`,
};

const LOCK: Statement = { name: 'agent-account-lock', text: 'SELECT pg_try_advisory_lock($1, hashtext($2)) AS got' };
/** agent_unlock_then_runnable (migration 20261123150030). */
const UNLOCK_THEN_RUNNABLE: Statement = {
  name: 'agent-account-unlock',
  text: 'SELECT released, runnable FROM agent_unlock_then_runnable($1::int, $2, $3::bigint)',
};
/** Behind a transaction pooler (turn-lock.ts): the lock lives in a transaction of its own, and the runnable check is separate. */
const XACT_LOCK: Statement = { name: 'agent-account-xact-lock', text: 'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS got' };
const RUNNABLE: Statement = {
  name: 'agent-account-runnable',
  text: `SELECT EXISTS (SELECT 1 FROM agent_turns WHERE account_id = $1 AND status = 'queued' AND not_before <= $2::bigint) AS runnable`,
};
const INTERRUPT_FLAG: Statement = {
  name: 'agent-turn-interrupt-flag',
  text: 'SELECT interrupt_requested_at IS NOT NULL AS flagged FROM agent_turns WHERE account_id = $1 AND id = $2',
};

export interface Claimed {
  orphans: number;
  turn: Turn | null;
  memory: string[];
}

type ClaimRow = { orphans: number; memory: string[] | null; turn: TurnRow | null };

function claimed(row: ClaimRow | undefined): Claimed {
  if (!row?.turn) return { orphans: row?.orphans ?? 0, turn: null, memory: [] };
  return { orphans: row.orphans, turn: toTurn(row.turn), memory: row.memory ?? [] };
}

/** Who recorded the turn, for the audit row written in the same statement (API messages). */
export interface RecordAudit {
  actor: string;
  tokenId: string | null;
  tokenLabel: string | null;
  method: string;
  route: string;
  status: number;
}

/** The turn path's statements. `on` is the pool, a transaction, or the connection holding the account lock. */
export const turnStatements = {
  /**
   * Inserts a turn; when it is a new `interrupt` message, flags the account's running turns; touches the
   * account's activity; and with `audit`, writes the audit row. Null when the clientRequestId was taken.
   */
  async record(
    on: Runner,
    t: NewTurn,
    opts: { interrupt: boolean; audit?: RecordAudit },
  ): Promise<{ turn: Turn; interrupting: string[] } | null> {
    const a = opts.audit;
    const rows = await run<TurnRow & { interrupting: string[] }>(on, RECORD, [
      t.id,
      t.accountId,
      t.kind,
      t.origin,
      t.tokenId,
      t.clientRequestId,
      t.text,
      t.data ? JSON.stringify(t.data) : null,
      t.mode,
      t.createdAt,
      t.notBefore,
      t.expiresAt,
      opts.interrupt,
      a?.actor ?? null,
      a?.tokenId ?? null,
      a?.tokenLabel ?? null,
      a?.method ?? null,
      a?.route ?? null,
      a?.status ?? null,
    ]);
    const row = rows[0];
    return row ? { turn: toTurn(row), interrupting: row.interrupting } : null;
  },
  /**
   * Claims the account's oldest runnable queued turn (asynchronous commit), touches its activity and
   * reads its memory, unless turns are left `running` (`orphans` > 0: a dead worker's, to recover
   * first). Call only while holding the account's turn lock.
   */
  async claim(on: Runner, accountId: string, now: number, runner: string, memoryLimit = 50): Promise<Claimed> {
    const rows = await run<ClaimRow>(on, CLAIM, [accountId, now, runner, memoryLimit]);
    return claimed(rows[0]);
  },
  /**
   * Tries the account's lock and, when it was taken, claims as `claim` does, in one round trip; the
   * claim's snapshot is taken after the lock (the function runs it as a statement of its own). Null when
   * another connection holds the lock. If this throws, whether the lock is held is unknown: close the
   * connection.
   */
  async lockAndClaim(
    conn: PgConnection,
    namespace: number,
    accountId: string,
    now: number,
    runner: string,
    memoryLimit = 50,
  ): Promise<Claimed | null> {
    const rows = await run<ClaimRow>(conn, LOCK_AND_CLAIM, [accountId, now, runner, memoryLimit, namespace]);
    return rows.length ? claimed(rows[0]) : null;
  },
  /**
   * Moves a turn to a terminal status (a synchronous commit, which also makes every earlier bookkeeping
   * write durable) and returns it with its latest `replies` bubbles and whether the account has another
   * runnable turn. Null when it was terminal already.
   */
  async finish(
    on: Runner,
    accountId: string,
    id: string,
    to: { status: 'replied' | 'failed'; failure?: string; interrupted?: boolean },
    at: number,
    replies = 5,
  ): Promise<{ turn: Turn; replies: Bubble[]; more: boolean } | null> {
    const rows = await run<TurnRow & { replies: { text: string; at: number }[] | null; more: boolean }>(on, FINISH, [
      accountId,
      id,
      to.status,
      to.failure ?? null,
      to.interrupted ?? false,
      at,
      replies,
    ]);
    const row = rows[0];
    return row ? { turn: toTurn(row), replies: toBubbles(row.replies), more: row.more } : null;
  },
  async tryLock(on: Runner, namespace: number, accountId: string): Promise<boolean> {
    const rows = await run<{ got: boolean }>(on, LOCK, [namespace, accountId]);
    return rows[0]?.got === true;
  },
  /**
   * Lets go of the account's lock and then asks whether it has a runnable turn, in one round trip; the
   * question's snapshot is taken after the unlock (so a turn recorded by someone who found the lock busy
   * is seen).
   */
  async unlockThenRunnable(
    conn: PgConnection,
    namespace: number,
    accountId: string,
    now: number,
  ): Promise<{ released: boolean; runnable: boolean }> {
    const rows = await run<{ released: boolean; runnable: boolean }>(conn, UNLOCK_THEN_RUNNABLE, [namespace, accountId, now]);
    return { released: rows[0]?.released === true, runnable: rows[0]?.runnable === true };
  },
  /** The transaction-level lock, for a connection inside the lock's own transaction. */
  async tryXactLock(conn: PgConnection, namespace: number, accountId: string): Promise<boolean> {
    const rows = await run<{ got: boolean }>(conn, XACT_LOCK, [namespace, accountId]);
    return rows[0]?.got === true;
  },
  async runnable(on: Runner, accountId: string, now: number): Promise<boolean> {
    const rows = await run<{ runnable: boolean }>(on, RUNNABLE, [accountId, now]);
    return rows[0]?.runnable === true;
  },
  async interruptRequested(on: Runner, accountId: string, id: string): Promise<boolean> {
    const rows = await run<{ flagged: boolean }>(on, INTERRUPT_FLAG, [accountId, id]);
    return rows[0]?.flagged === true;
  },
};
