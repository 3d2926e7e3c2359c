import { hostname } from 'node:os';
import type { Bubble, OutsideData, Turn, TurnKind, TurnMode, TurnStatus } from './agent.types.js';
import { escapeLiteral } from 'pg';
import { run, type PgConnection, type Queryable, type Runner, type Statement } from '../db.js';

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

interface TurnRow {
  id: string;
  account_id: string;
  kind: TurnKind;
  origin: string;
  token_id: string | null;
  client_request_id: string | null;
  text: string;
  data: OutsideData | null;
  mode: TurnMode;
  status: TurnStatus;
  failure: string | null;
  interrupted: boolean;
  interrupt_requested_at: number | null;
  attempts: number;
  steps_done: number;
  created_at: number;
  not_before: number;
  expires_at: number | null;
  started_at: number | null;
  finished_at: number | null;
}

export function toTurn(r: TurnRow): Turn {
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    origin: r.origin,
    tokenId: r.token_id,
    clientRequestId: r.client_request_id,
    text: r.text,
    data: r.data,
    mode: r.mode,
    status: r.status,
    failure: r.failure,
    interrupted: r.interrupted,
    interruptRequestedAt: r.interrupt_requested_at,
    attempts: r.attempts,
    stepsDone: r.steps_done,
    createdAt: r.created_at,
    notBefore: r.not_before,
    expiresAt: r.expires_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

export interface NewTurn {
  id: string;
  accountId: string;
  kind: TurnKind;
  origin: string;
  tokenId: string | null;
  clientRequestId: string | null;
  text: string;
  data: OutsideData | null;
  mode: TurnMode;
  createdAt: number;
  notBefore: number;
  expiresAt: number | null;
}

/** Turns, reply bubbles, memory and per-account agent state. Every query takes the account id. */
export function turnsRepository(q: Queryable) {
  return {
    async find(accountId: string, id: string): Promise<Turn | null> {
      const row: TurnRow | undefined = await q('agent_turns').where({ account_id: accountId, id }).first();
      return row ? toTurn(row) : null;
    },
    async findByClientRequestId(tokenId: string, clientRequestId: string): Promise<Turn | null> {
      const row: TurnRow | undefined = await q('agent_turns').where({ token_id: tokenId, client_request_id: clientRequestId }).first();
      return row ? toTurn(row) : null;
    },
    /** This token's newest API message. */
    async newestOfToken(accountId: string, tokenId: string): Promise<Turn | null> {
      const row: TurnRow | undefined = await q('agent_turns')
        .where({ account_id: accountId, token_id: tokenId, kind: 'message', origin: 'api' })
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .first();
      return row ? toTurn(row) : null;
    },
    /** Turns left `running` by a worker that no longer holds the lock. Call only while holding it. */
    async listRunning(accountId: string): Promise<Turn[]> {
      const rows: TurnRow[] = await q('agent_turns').where({ account_id: accountId, status: 'running' });
      return rows.map(toTurn);
    },
    /**
     * A dead worker's turn back to `queued`, to resume from its recorded steps. It keeps `started_at`
     * (its first start): it has started and not finished, so it still reads as running (spec 2.5), and
     * what it made before the crash stays inside its [started_at, finished_at] window.
     */
    async requeue(accountId: string, id: string): Promise<boolean> {
      const n = await q('agent_turns').where({ account_id: accountId, id, status: 'running' }).update({ status: 'queued' });
      return n > 0;
    },
    /**
     * A turn and its latest `n` bubbles in one statement (one snapshot): bubbles are committed before the
     * turn turns terminal, so a terminal row always comes with all of them.
     */
    async findWithReplies(accountId: string, id: string, n: number): Promise<{ turn: Turn; replies: Bubble[] } | null> {
      const row: (TurnRow & { replies: Bubble[] | null }) | undefined = await q('agent_turns as t')
        .where({ 't.account_id': accountId, 't.id': id })
        .select(
          't.*',
          q.raw(
            `(SELECT json_agg(json_build_object('text', r.text, 'at', r.at) ORDER BY r.id) FROM
               (SELECT id, text, at FROM agent_replies WHERE turn_id = t.id ORDER BY id DESC LIMIT ?) r) AS replies`,
            [n],
          ),
        )
        .first();
      if (!row) return null;
      return { turn: toTurn(row), replies: (row.replies ?? []).map((b) => ({ text: b.text, at: Number(b.at) })) };
    },
    /** The latest `n` bubbles of a turn, oldest first. */
    async latestReplies(turnId: string, n: number): Promise<Bubble[]> {
      const rows: { text: string; at: number }[] = await q('agent_replies').where({ turn_id: turnId }).orderBy('id', 'desc').limit(n).select('text', 'at');
      return rows.reverse().map((r) => ({ text: r.text, at: r.at }));
    },
    /** A token's thread: its API messages and the agent's bubbles to them, newest first. */
    async thread(accountId: string, tokenId: string, limit: number) {
      const rows: { role: 'user' | 'agent'; request_id: string; text: string; at: number }[] = await q
        .select('*')
        .from(
          q
            .select(q.raw(`'user' as role`), 'id as request_id', 'text', 'created_at as at', q.raw('0 as ord'), q.raw('0::bigint as seq'))
            .from('agent_turns')
            .where({ account_id: accountId, token_id: tokenId, kind: 'message', origin: 'api' })
            .unionAll((u) =>
              u
                .select(q.raw(`'agent' as role`), 'r.turn_id as request_id', 'r.text', 'r.at', q.raw('1 as ord'), 'r.id as seq')
                .from('agent_replies as r')
                .join('agent_turns as t', 't.id', 'r.turn_id')
                .where({ 't.account_id': accountId, 't.token_id': tokenId, 't.kind': 'message', 't.origin': 'api' }),
            )
            .as('items'),
        )
        .orderBy('at', 'desc')
        .orderBy('ord', 'desc')
        .orderBy('seq', 'desc')
        .limit(limit);
      return rows.map((r) => ({ role: r.role, requestId: r.request_id, text: r.text, at: r.at }));
    },
    /** Recent exchanges of the account (every origin) for the brain's context, oldest first. */
    async recentHistory(accountId: string, beforeTurnId: string, n: number): Promise<{ role: 'user' | 'agent'; text: string }[]> {
      const turns: { id: string; text: string }[] = await q('agent_turns')
        .where({ account_id: accountId, kind: 'message' })
        .whereNot({ id: beforeTurnId })
        .whereIn('status', ['replied', 'failed'])
        .orderBy('created_at', 'desc')
        .limit(n)
        .select('id', 'text');
      if (!turns.length) return [];
      const replies: { turn_id: string; text: string }[] = await q('agent_replies')
        .whereIn(
          'turn_id',
          turns.map((t) => t.id),
        )
        .orderBy('id')
        .select('turn_id', 'text');
      const out: { role: 'user' | 'agent'; text: string }[] = [];
      for (const t of turns.reverse()) {
        out.push({ role: 'user', text: t.text });
        for (const r of replies) if (r.turn_id === t.id) out.push({ role: 'agent', text: r.text });
      }
      return out;
    },
    async remember(accountId: string, text: string, turnId: string | null, at: number): Promise<void> {
      await q('agent_memory').insert({ account_id: accountId, text, turn_id: turnId, created_at: at });
    },
    /**
     * Several turns in one statement (no clientRequestId, so no conflict to ignore), in the order
     * given. Used where many inputs arrive together (webhook events handed over in a batch).
     */
    async insertMany(ts: NewTurn[]): Promise<Turn[]> {
      if (!ts.length) return [];
      const rows: TurnRow[] = await q('agent_turns')
        .insert(
          ts.map((t) => {
            if (t.clientRequestId !== null) throw new Error('insertMany takes turns without a clientRequestId');
            return {
              id: t.id,
              account_id: t.accountId,
              kind: t.kind,
              origin: t.origin,
              token_id: t.tokenId,
              client_request_id: null,
              text: t.text,
              data: t.data ? JSON.stringify(t.data) : null,
              mode: t.mode,
              status: 'queued',
              created_at: t.createdAt,
              not_before: t.notBefore,
              expires_at: t.expiresAt,
            };
          }),
        )
        .returning('*');
      return rows.map(toTurn);
    },
    /** touchState(…, false) for several accounts in one statement, in account order (no lock-order deadlock). */
    async touchStates(accountIds: string[], at: number): Promise<void> {
      const ids = [...new Set(accountIds)].sort();
      if (!ids.length) return;
      await q('agent_state')
        .insert(ids.map((id) => ({ account_id: id, last_activity_at: at, last_turn_at: null })))
        .onConflict('account_id')
        .merge({ last_activity_at: q.raw('GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)') });
    },
    async status(accountId: string, now: number, windowMs: number) {
      const state = await q('agent_state')
        .where({ account_id: accountId })
        .first<{ last_activity_at: number | null; last_turn_at: number | null } | undefined>();
      // Work that is started or due and unfinished counts (docs/decisions.md, "Agent turns: crash
      // recovery"): a running turn, a turn queued again after its worker died, an accepted event or a
      // message waiting for a worker. A wake that is not due yet does not.
      const running = await q('agent_turns')
        .where({ account_id: accountId })
        .andWhere((w) =>
          w
            .where((r) => r.where({ status: 'running' }).andWhere('started_at', '>', now - windowMs))
            .orWhere((p) =>
              p
                .where({ status: 'queued' })
                .andWhere('not_before', '<=', now)
                .andWhereRaw('GREATEST(not_before, coalesce(started_at, 0)) > ?', [now - windowMs]),
            ),
        )
        .first('id');
      const wakes = await q('agent_turns')
        .where({ account_id: accountId, kind: 'wake', status: 'queued' })
        .select(q.raw('count(*)::int as n'), q.raw('min(not_before) as next'))
        .first<{ n: number; next: number | null }>();
      return {
        running: Boolean(running),
        lastActivityAt: state?.last_activity_at ?? null,
        lastTurnAt: state?.last_turn_at ?? null,
        pendingWakes: wakes?.n ?? 0,
        nextWakeAt: wakes?.next == null ? null : Number(wakes.next),
      };
    },
    /** Queue-mode turns past their lifetime → failed. Returns the ids (to wake their waiters). */
    async expireQueued(now: number, failure: string, accountId?: string): Promise<string[]> {
      let query = q('agent_turns').where({ status: 'queued', mode: 'queue' }).andWhere('expires_at', '<=', now);
      if (accountId) query = query.andWhere({ account_id: accountId });
      const rows: { id: string }[] = await query.update({ status: 'failed', failure, finished_at: now }).returning('id');
      return rows.map((r) => r.id);
    },
    /** Accounts with work that should have started by now: queued turns older than `before`, or running ones. */
    async accountsNeedingAttention(queuedBefore: number, runningBefore: number, limit: number): Promise<string[]> {
      const rows: { account_id: string }[] = await q('agent_turns')
        .where((w) =>
          w
            .where((a) => a.where({ status: 'queued' }).andWhere('not_before', '<=', queuedBefore))
            .orWhere((a) => a.where({ status: 'running' }).andWhere('started_at', '<=', runningBefore)),
        )
        .distinct('account_id')
        .limit(limit);
      return rows.map((r) => r.account_id);
    },
  };
}

/**
 * The turn's hot path, one prepared statement per step (docs/decisions.md, "Agent round trip"):
 * recording a turn, claiming one, a reply bubble and finishing each take a single round trip.
 */
const RECORD: Statement = {
  name: 'agent-turn-record',
  text: `WITH ins AS (
    INSERT INTO agent_turns (id, account_id, kind, origin, token_id, client_request_id, text, data, mode, status, created_at, not_before, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, 'queued', $10::bigint, $11::bigint, $12::bigint)
    ON CONFLICT (token_id, client_request_id) WHERE client_request_id IS NOT NULL DO NOTHING
    RETURNING *
  ), flagged AS (
    UPDATE agent_turns SET interrupt_requested_at = $10::bigint
    WHERE $13::boolean AND account_id = $2 AND status = 'running' AND interrupt_requested_at IS NULL AND EXISTS (SELECT 1 FROM ins)
    RETURNING id
  ), state AS (
    INSERT INTO agent_state (account_id, last_activity_at, last_turn_at) SELECT $2, $10::bigint, NULL FROM ins
    ON CONFLICT (account_id) DO UPDATE SET last_activity_at = GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)
  ), audit AS (
    INSERT INTO audit_log (account_id, actor, token_id, token_label, method, route, target_id, status, at)
    SELECT $2, $14::text, $15::text, $16::text, $17::text, $18::text, ins.id, $19::int, $10::bigint FROM ins WHERE $14::text IS NOT NULL
  )
  SELECT ins.*, ARRAY(SELECT id FROM flagged) AS interrupting FROM ins`,
};

const CLAIM: Statement = {
  name: 'agent-turn-claim',
  text: `WITH running AS (
    SELECT count(*)::int AS n FROM agent_turns WHERE account_id = $1 AND status = 'running'
  ), next AS (
    SELECT id FROM agent_turns WHERE account_id = $1 AND status = 'queued' AND not_before <= $2::bigint ORDER BY created_at, id LIMIT 1
  ), claimed AS (
    UPDATE agent_turns t SET status = 'running', started_at = coalesce(t.started_at, $2::bigint), attempts = t.attempts + 1, runner = $3
    FROM next, running WHERE t.id = next.id AND t.status = 'queued' AND running.n = 0 AND $5::boolean
    RETURNING t.*
  ), state AS (
    INSERT INTO agent_state (account_id, last_activity_at, last_turn_at) SELECT $1, $2::bigint, $2::bigint FROM claimed
    ON CONFLICT (account_id) DO UPDATE
      SET last_activity_at = GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at), last_turn_at = EXCLUDED.last_turn_at
  )
  SELECT (SELECT n FROM running) AS orphans, ${ASYNC_COMMIT} AS async_commit, c.*,
    CASE WHEN c.id IS NULL THEN NULL ELSE
      (SELECT coalesce(json_agg(m.text ORDER BY m.id), '[]'::json) FROM
        (SELECT id, text FROM agent_memory WHERE account_id = $1 ORDER BY id DESC LIMIT $4) m)
    END AS memory
  FROM (SELECT 1) one LEFT JOIN claimed c ON true`,
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
const INTERRUPT_FLAG: Statement = {
  name: 'agent-turn-interrupt-flag',
  text: 'SELECT interrupt_requested_at IS NOT NULL AS flagged FROM agent_turns WHERE account_id = $1 AND id = $2',
};
const TOKEN_LIVE: Statement = { name: 'agent-token-live', text: 'SELECT 1 AS live FROM api_tokens WHERE id = $1 AND revoked_at IS NULL' };

type ClaimRow = TurnRow & { orphans: number; memory: string[] | null };

function claimed(row: ClaimRow | undefined): { orphans: number; turn: Turn | null; memory: string[] } {
  if (!row || row.id === null) return { orphans: row?.orphans ?? 0, turn: null, memory: [] };
  return { orphans: row.orphans, turn: toTurn(row), memory: row.memory ?? [] };
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

const bubbles = (raw: { text: string; at: number | string }[] | null): Bubble[] => (raw ?? []).map((b) => ({ text: b.text, at: Number(b.at) }));

/** The turn path's statements. `on` is the pool, a transaction, or the connection holding the account lock. */
export const turnStatements = {
  /**
   * Inserts a turn; when it is a new `interrupt` message, flags the account's running turns; touches the
   * account's activity; and with `audit`, writes the audit row. Null when the clientRequestId was taken.
   */
  async record(on: Runner, t: NewTurn, opts: { interrupt: boolean; audit?: RecordAudit }): Promise<{ turn: Turn; interrupting: string[] } | null> {
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
  async claim(on: Runner, accountId: string, now: number, runner: string, memoryLimit = 50): Promise<{ orphans: number; turn: Turn | null; memory: string[] }> {
    const rows = await run<ClaimRow>(on, CLAIM, [accountId, now, runner, memoryLimit, true]);
    return claimed(rows[0]);
  },
  /**
   * Tries the account's lock and, when it was taken, claims as `claim` does, in one round trip: two
   * statements of one simple query, so the claim's snapshot is taken after the lock (as if sent
   * separately). The claim runs only while the lock is held (a transaction-local setting carries the
   * answer to it). Null when another connection holds the lock. If this throws, whether the lock is held
   * is unknown: close the connection.
   */
  async lockAndClaim(
    conn: PgConnection,
    namespace: number,
    accountId: string,
    now: number,
    runner: string,
    memoryLimit = 50,
  ): Promise<{ orphans: number; turn: Turn | null; memory: string[] } | null> {
    const literals: Record<string, string> = {
      $1: escapeLiteral(accountId),
      $2: String(Math.trunc(now)),
      $3: escapeLiteral(runner),
      $4: String(Math.trunc(memoryLimit)),
      $5: `(current_setting('agent.turn_locked', true) = 'true')`,
    };
    const claimText = CLAIM.text.replace(/\$[1-5](?!\d)/g, (p) => literals[p]!);
    const results = (await conn.query({
      text:
        `SELECT set_config('agent.turn_locked', pg_try_advisory_lock(${Math.trunc(namespace)}, hashtext(${literals.$1}))::text, true) AS got; ` +
        claimText,
    })) as unknown as [{ rows: { got: string }[] }, { rows: ClaimRow[] }];
    if (results[0].rows[0]?.got !== 'true') return null;
    return claimed(results[1].rows[0]);
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
    return row ? { turn: toTurn(row), replies: bubbles(row.replies), more: row.more } : null;
  },
  async tryLock(on: Runner, namespace: number, accountId: string): Promise<boolean> {
    const rows = await run<{ got: boolean }>(on, LOCK, [namespace, accountId]);
    return rows[0]?.got === true;
  },

  /**
   * Lets go of the account's lock and then asks whether it has a runnable turn, in one round trip: two
   * statements in one simple query, the second with its own snapshot taken after the unlock (so a turn
   * recorded by someone who found the lock busy is seen).
   */
  async unlockThenRunnable(conn: PgConnection, namespace: number, accountId: string, now: number): Promise<{ released: boolean; runnable: boolean }> {
    const account = escapeLiteral(accountId);
    const results = (await conn.query({
      text:
        `SELECT pg_advisory_unlock(${Math.trunc(namespace)}, hashtext(${account})) AS released; ` +
        `SELECT EXISTS (SELECT 1 FROM agent_turns WHERE account_id = ${account} AND status = 'queued' AND not_before <= ${Math.trunc(now)}) AS runnable`,
    })) as unknown as [{ rows: { released: boolean }[] }, { rows: { runnable: boolean }[] }];
    return { released: results[0].rows[0]?.released === true, runnable: results[1].rows[0]?.runnable === true };
  },

  async interruptRequested(on: Runner, accountId: string, id: string): Promise<boolean> {
    const rows = await run<{ flagged: boolean }>(on, INTERRUPT_FLAG, [accountId, id]);
    return rows[0]?.flagged === true;
  },
  /** Whether an API token is still live (not revoked): a waiting request checks before it answers. */
  async tokenLive(on: Runner, tokenId: string): Promise<boolean> {
    return (await run(on, TOKEN_LIVE, [tokenId])).length > 0;
  },
};
