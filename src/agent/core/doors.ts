import type { Queryable } from '../../db.js';

/**
 * What other areas read of the agent's turns and replies (webhooks' delivery outcome, workflows' agent steps), so
 * that no other area names the agent's tables.
 */
export function agentTurnDoors(q: Queryable) {
  return {
    /** A turn's state and time window, or undefined for no such turn of the account. */
    window: (accountId: string, turnId: string) =>
      q('agent_turns').where({ account_id: accountId, id: turnId }).first<
        | {
            id: string;
            status: 'queued' | 'running' | 'replied' | 'failed';
            started_at: number | null;
            finished_at: number | null;
            failure: string | null;
          }
        | undefined
      >('id', 'status', 'started_at', 'finished_at', 'failure'),

    /** The turn's first reply bubble (by id), or undefined. */
    firstReply: (accountId: string, turnId: string) =>
      q('agent_replies').where({ account_id: accountId, turn_id: turnId }).orderBy('id').first<{ text: string } | undefined>('text'),

    /** How the turn ended, or null while it has not. */
    async end(turnId: string): Promise<{ status: 'replied' | 'failed'; failure: string | null } | null> {
      const t = await q('agent_turns')
        .where({ id: turnId })
        .first<{ status: string; failure: string | null } | undefined>('status', 'failure');
      return t && (t.status === 'replied' || t.status === 'failed') ? { status: t.status, failure: t.failure } : null;
    },

    /** The turn's last reply bubble's text, or null. */
    async lastReply(turnId: string): Promise<string | null> {
      const r = await q('agent_replies')
        .where({ turn_id: turnId })
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .first<{ text: string } | undefined>('text');
      return r?.text ?? null;
    },
  };
}

/**
 * SQL text for a statement of another area that must read the agent's turns inside it (the `/results` harness, handed
 * it by the route and read_results): the turns as a table of (account_id, status, started_at, finished_at), a subquery
 * Postgres folds into the statement. Read-only.
 */
export const AGENT_TURNS_SQL = '(SELECT account_id, status, started_at, finished_at FROM agent_turns)';

/**
 * What decides whether a turn carried outside data (src/review/outside-data.ts decides it), or null for no such turn
 * of the account: review's `TurnReading`, handed to it by the composition roots and by the agent when it files work.
 */
export async function turnReading(
  q: Queryable,
  accountId: string,
  turnId: string,
): Promise<{ kind: string; origin: string; data: unknown } | null> {
  const row = await q('agent_turns')
    .where({ account_id: accountId, id: turnId })
    .first<{ kind: string; origin: string; data: unknown } | undefined>('kind', 'origin', 'data');
  return row ?? null;
}
