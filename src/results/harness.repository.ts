import type { Queryable } from '../db.js';

/**
 * The agent's own work over one window (`/results` `harness`), read from the tables that hold it (agent
 * turns, review cards, workflow runs), never from channel events. The rules are in docs/decisions.md
 * ("Results: harness").
 */
export interface HarnessMetrics {
  /** Agent turns that ran and ended (`replied`, or `failed` after starting), by when they ended. */
  turns: number;
  /** Review cards created, less revisions the agent folded into the card they revise (`merged`). */
  cardsCreated: number;
  /** Cards a person resolved with a yes or an answer: approve, send, answer, choose. */
  approvedByPerson: number;
  /** Cards the trust ladder resolved at their deadline. */
  autoResolvedByTrustLadder: number;
  /** Cards that ran without approval because the account's setting lets that kind of work run. */
  resolvedBySetting: number;
  /** Cards a person dismissed. */
  dismissed: number;
  workflowRunsSucceeded: number;
  workflowRunsFailed: number;
}

const METRICS = [
  'turns',
  'cardsCreated',
  'approvedByPerson',
  'autoResolvedByTrustLadder',
  'resolvedBySetting',
  'dismissed',
  'workflowRunsSucceeded',
  'workflowRunsFailed',
] as const satisfies readonly (keyof HarnessMetrics)[];

// Each count is `count(*) FILTER (WHERE <rule> AND <in the window or the baseline>)`; `cur` is the window.
const counts = (name: string, rule: string) =>
  `count(*) FILTER (WHERE ${rule} AND cur)::int AS "${name}_w", count(*) FILTER (WHERE ${rule} AND NOT cur)::int AS "${name}_b"`;

/**
 * Four aggregates over [from, until], split at `since`, in one statement (one round trip), each reading
 * its table through an (account_id, time) index (migration 20261125141000).
 */
const HARNESS_SQL = `
SELECT * FROM
  (SELECT ${counts('turns', 'true')}
     FROM (SELECT finished_at >= :since AS cur FROM agent_turns
            WHERE account_id = :account AND finished_at >= :from AND finished_at <= :until
              AND status IN ('replied', 'failed') AND started_at IS NOT NULL) t) turns,
  (SELECT ${counts('cardsCreated', 'true')}
     FROM (SELECT created_at >= :since AS cur FROM review_cards
            WHERE account_id = :account AND created_at >= :from AND created_at <= :until
              AND NOT (status = 'resolved' AND resolution->>'action' = 'merged')) c) created,
  (SELECT ${counts('approvedByPerson', "done AND by = 'person' AND action IN ('approve', 'send', 'answer', 'choose')")},
          ${counts('autoResolvedByTrustLadder', "done AND by = 'trust_ladder'")},
          ${counts('resolvedBySetting', "done AND by = 'setting'")},
          ${counts('dismissed', "status = 'dismissed'")}
     FROM (SELECT resolved_at >= :since AS cur, status, status IN ('resolved', 'sent') AS done,
                  resolution->>'by' AS by, resolution->>'action' AS action
             FROM review_cards
            WHERE account_id = :account AND resolved_at >= :from AND resolved_at <= :until) r) resolved,
  (SELECT ${counts('workflowRunsSucceeded', "status = 'done'")}, ${counts('workflowRunsFailed', "status = 'failed'")}
     FROM (SELECT finished_at >= :since AS cur, status FROM workflow_runs
            WHERE account_id = :account AND finished_at >= :from AND finished_at <= :until
              AND status IN ('done', 'failed')) w) runs`;

export function harnessRepository(q: Queryable) {
  return {
    /** The harness counts for the window [since, until] and the baseline [from, since). */
    async counts(
      accountId: string,
      from: number,
      since: number,
      until: number,
    ): Promise<{ window: HarnessMetrics; baseline: HarnessMetrics }> {
      const { rows } = (await q.raw(HARNESS_SQL, { account: accountId, from, since, until })) as { rows: Record<string, number>[] };
      const row = rows[0] ?? {};
      const pick = (suffix: 'w' | 'b') =>
        Object.fromEntries(METRICS.map((m) => [m, row[`${m}_${suffix}`] ?? 0])) as unknown as HarnessMetrics;
      return { window: pick('w'), baseline: pick('b') };
    },
  };
}
