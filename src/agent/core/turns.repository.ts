import type { Queryable } from '../../db.js';
import type { Bubble, Turn, TurnStatus } from './agent.types.js';
import { toBubbles, toTurn, type NewTurn, type TurnRow } from './turn-rows.js';

/**
 * Turn rows and their reply bubbles, through the query builder: everything off the turn's hot path (the
 * hot path's statements are in turn-statements.ts). Every query of an account's turns takes the account id.
 */
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
    /** A turn's status and failure, by id alone (callers waiting on a turn they started). */
    async outcome(id: string): Promise<{ status: TurnStatus; failure: string | null } | null> {
      const row = await q('agent_turns')
        .where({ id })
        .first<{ status: TurnStatus; failure: string | null } | undefined>('status', 'failure');
      return row ?? null;
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
      return { turn: toTurn(row), replies: toBubbles(row.replies) };
    },
    /** The latest `n` bubbles of a turn, oldest first. */
    async latestReplies(turnId: string, n: number): Promise<Bubble[]> {
      const rows: { text: string; at: number }[] = await q('agent_replies')
        .where({ turn_id: turnId })
        .orderBy('id', 'desc')
        .limit(n)
        .select('text', 'at');
      return rows.reverse().map((r) => ({ text: r.text, at: r.at }));
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
    /** Wakes of this account not run yet (due or scheduled): how many, and the earliest's time. */
    async waitingWakes(accountId: string): Promise<{ count: number; next: number | null }> {
      const row = await q('agent_turns')
        .where({ account_id: accountId, kind: 'wake', status: 'queued' })
        .select(q.raw('count(*)::int as n'), q.raw('min(not_before) as next'))
        .first<{ n: number; next: number | string | null } | undefined>();
      return { count: row?.n ?? 0, next: row?.next == null ? null : Number(row.next) };
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
