import type { Queryable } from '../../db.js';
import { CARD_STATES_SQL } from '../../review/cards/doors.js';
import type { Span, WindowSplit } from '../rollup-window.js';
import { rollupsRepository } from '../rollups.repository.js';

/**
 * The tables of areas above the scoreboard that the harness counts, as SQL text their owners write (a subquery each,
 * which Postgres folds into the one statement): the agent's turns (account_id, status, started_at, finished_at:
 * src/agent/core/doors.ts `AGENT_TURNS_SQL`) and the workflows' runs (account_id, status, finished_at:
 * src/workflows/runs.repository.ts `WORKFLOW_RUNS_SQL`). The route and the agent's read_results hand them in.
 */
export interface HarnessSources {
  turns: string;
  workflowRuns: string;
}

/**
 * The agent's own work over one window (`/results` `harness`), read from the tables that hold it (agent turns, review
 * cards, workflow runs: each through its owner's SQL text), never from channel events. The rules are in
 * docs/decisions/content-and-measurement.md ("/results harness: the agent's own work").
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

/** `(col >= :s0lo AND col < :s0hi OR ...)`: the raw spans of the window, as named bindings. */
const inRawSpans = (col: string, spans: Span[]) =>
  spans.length ? `(${spans.map((_, i) => `${col} >= :s${i}lo AND ${col} < :s${i}hi`).join(' OR ')})` : 'false';

/**
 * Four aggregates over the raw spans, split at `since`, in one statement (one round trip), each reading
 * its table through an (account_id, time) index (migration 20261125141000).
 */
const harnessSql = (spans: Span[], from: HarnessSources) => `
SELECT * FROM
  (SELECT ${counts('turns', 'true')}
     FROM (SELECT finished_at >= :since AS cur FROM ${from.turns} t
            WHERE account_id = :account AND ${inRawSpans('finished_at', spans)}
              AND status IN ('replied', 'failed') AND started_at IS NOT NULL) t) turns,
  (SELECT ${counts('cardsCreated', 'true')}
     FROM (SELECT created_at >= :since AS cur FROM ${CARD_STATES_SQL} c
            WHERE account_id = :account AND ${inRawSpans('created_at', spans)}
              AND NOT (status = 'resolved' AND resolution->>'action' = 'merged')) c) created,
  (SELECT ${counts('approvedByPerson', "done AND by = 'person' AND action IN ('approve', 'send', 'answer', 'choose')")},
          ${counts('autoResolvedByTrustLadder', "done AND by = 'trust_ladder'")},
          ${counts('resolvedBySetting', "done AND by = 'setting'")},
          ${counts('dismissed', "status = 'dismissed'")}
     FROM (SELECT resolved_at >= :since AS cur, status, status IN ('resolved', 'sent') AS done,
                  resolution->>'by' AS by, resolution->>'action' AS action
             FROM ${CARD_STATES_SQL} c
            WHERE account_id = :account AND ${inRawSpans('resolved_at', spans)}) r) resolved,
  (SELECT ${counts('workflowRunsSucceeded', "status = 'done'")}, ${counts('workflowRunsFailed', "status = 'failed'")}
     FROM (SELECT finished_at >= :since AS cur, status FROM ${from.workflowRuns} w
            WHERE account_id = :account AND ${inRawSpans('finished_at', spans)}
              AND status IN ('done', 'failed')) w) runs`;

export function harnessRepository(q: Queryable, from: HarnessSources) {
  return {
    /**
     * The harness counts for the window (from `since`) and the baseline (before it): `split.raw` counted from
     * the agent's tables, `split.rolled` and `split.minutes` from the hourly and minute rollups (the same rules, kept
     * by triggers: the migration 20261128100000) and their unfolded deltas.
     */
    async counts(
      accountId: string,
      since: number,
      split: WindowSplit,
      watermark: string,
    ): Promise<{ window: HarnessMetrics; baseline: HarnessMetrics }> {
      const spans = Object.fromEntries(
        split.raw.flatMap((s, i) => [
          [`s${i}lo`, s.lo],
          [`s${i}hi`, s.hi],
        ]),
      );
      const [raw, rolled] = await Promise.all([
        q.raw(harnessSql(split.raw, from), { account: accountId, since, ...spans }) as unknown as Promise<{
          rows: Record<string, number>[];
        }>,
        split.rolled.length || split.minutes.length ? rollupsRepository(q).harness(accountId, since, split, watermark) : [],
      ]);
      const row = raw.rows[0] ?? {};
      const added = new Map(rolled.map((r) => [`${r.metric}_${r.current ? 'w' : 'b'}`, r.n]));
      const pick = (suffix: 'w' | 'b') =>
        Object.fromEntries(
          METRICS.map((m) => [m, (row[`${m}_${suffix}`] ?? 0) + (added.get(`${m}_${suffix}`) ?? 0)]),
        ) as unknown as HarnessMetrics;
      return { window: pick('w'), baseline: pick('b') };
    },
  };
}
