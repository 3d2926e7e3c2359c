import { hostname } from 'node:os';
import type { Queryable } from '../db.js';
import type { Bubble, OutsideData, Turn, TurnKind, TurnMode, TurnStatus } from './agent.types.js';

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
    async insert(t: NewTurn): Promise<Turn | null> {
      const rows: TurnRow[] = await q('agent_turns')
        .insert({
          id: t.id,
          account_id: t.accountId,
          kind: t.kind,
          origin: t.origin,
          token_id: t.tokenId,
          client_request_id: t.clientRequestId,
          text: t.text,
          data: t.data ? JSON.stringify(t.data) : null,
          mode: t.mode,
          status: 'queued',
          created_at: t.createdAt,
          not_before: t.notBefore,
          expires_at: t.expiresAt,
        })
        .onConflict(q.raw('(token_id, client_request_id) WHERE client_request_id IS NOT NULL'))
        .ignore()
        .returning('*');
      return rows[0] ? toTurn(rows[0]) : null;
    },
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
    /** Flags the account's running turns for interruption; returns their ids (to signal the holder). */
    async requestInterrupt(accountId: string, at: number): Promise<string[]> {
      const rows: { id: string }[] = await q('agent_turns')
        .where({ account_id: accountId, status: 'running' })
        .whereNull('interrupt_requested_at')
        .update({ interrupt_requested_at: at })
        .returning('id');
      return rows.map((r) => r.id);
    },
    /** Claims the oldest runnable queued turn. Call only while holding the account's turn lock. */
    async claimNext(accountId: string, now: number): Promise<Turn | null> {
      const rows: TurnRow[] = await q('agent_turns')
        .where(
          'id',
          q('agent_turns')
            .select('id')
            .where({ account_id: accountId, status: 'queued' })
            .andWhere('not_before', '<=', now)
            .orderBy('created_at')
            .orderBy('id')
            .limit(1),
        )
        .andWhere({ status: 'queued' })
        .update({ status: 'running', started_at: now, attempts: q.raw('attempts + 1'), runner: RUNNER })
        .returning('*');
      return rows[0] ? toTurn(rows[0]) : null;
    },
    async hasRunnable(accountId: string, now: number): Promise<boolean> {
      const row = await q('agent_turns').where({ account_id: accountId, status: 'queued' }).andWhere('not_before', '<=', now).first('id');
      return Boolean(row);
    },
    /** Turns left `running` by a worker that no longer holds the lock. Call only while holding it. */
    async listRunning(accountId: string): Promise<Turn[]> {
      const rows: TurnRow[] = await q('agent_turns').where({ account_id: accountId, status: 'running' });
      return rows.map(toTurn);
    },
    async requeue(accountId: string, id: string): Promise<boolean> {
      const n = await q('agent_turns')
        .where({ account_id: accountId, id, status: 'running' })
        .update({ status: 'queued', started_at: null, interrupt_requested_at: null });
      return n > 0;
    },
    /** Moves a turn to a terminal status; conditional on it not being terminal already. */
    async finish(
      accountId: string,
      id: string,
      to: { status: 'replied' | 'failed'; failure?: string; interrupted?: boolean },
      at: number,
    ): Promise<boolean> {
      const n = await q('agent_turns')
        .where({ account_id: accountId, id })
        .whereIn('status', ['queued', 'running'])
        .update({ status: to.status, failure: to.failure ?? null, interrupted: to.interrupted ?? false, finished_at: at });
      return n > 0;
    },
    async stepDone(accountId: string, id: string): Promise<void> {
      await q('agent_turns').where({ account_id: accountId, id }).increment('steps_done', 1);
    },
    async interruptRequested(accountId: string, id: string): Promise<boolean> {
      const row = await q('agent_turns').where({ account_id: accountId, id }).first<{ interrupt_requested_at: number | null } | undefined>('interrupt_requested_at');
      return row?.interrupt_requested_at != null;
    },
    async addReply(accountId: string, turnId: string, text: string, at: number): Promise<void> {
      await q('agent_replies').insert({ account_id: accountId, turn_id: turnId, text, at });
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
    async memory(accountId: string, n = 50): Promise<string[]> {
      const rows: { text: string }[] = await q('agent_memory').where({ account_id: accountId }).orderBy('id', 'desc').limit(n).select('text');
      return rows.reverse().map((r) => r.text);
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
    async touchState(accountId: string, at: number, turnStarted: boolean): Promise<void> {
      await q('agent_state')
        .insert({ account_id: accountId, last_activity_at: at, last_turn_at: turnStarted ? at : null })
        .onConflict('account_id')
        .merge(
          turnStarted
            ? { last_activity_at: q.raw('GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)'), last_turn_at: at }
            : { last_activity_at: q.raw('GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)') },
        );
    },
    async status(accountId: string, now: number, windowMs: number) {
      const state = await q('agent_state')
        .where({ account_id: accountId })
        .first<{ last_activity_at: number | null; last_turn_at: number | null } | undefined>();
      const running = await q('agent_turns')
        .where({ account_id: accountId, status: 'running' })
        .andWhere('started_at', '>', now - windowMs)
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
