import { AGENT_TURNS_SQL } from '../../src/agent/core/doors.js';
import type { Queryable } from '../../src/db.js';
import { inboundUrlsRepository } from '../../src/inbound/inbound-urls.repository.js';
import { getResults as scoreboard, type ScoreboardSources } from '../../src/results/report/results.service.js';
import { WORKFLOW_RUNS_SQL } from '../../src/workflows/runs.repository.js';

/** What the scoreboard reads of the areas above it, as the `/results` route and the agent-turns pool hand it. */
export const SCOREBOARD_SOURCES: ScoreboardSources = {
  turns: AGENT_TURNS_SQL,
  workflowRuns: WORKFLOW_RUNS_SQL,
  hasInboundUrl: (q, accountId) => inboundUrlsRepository(q).has(accountId),
};

type Options = Omit<NonNullable<Parameters<typeof scoreboard>[5]>, 'sources'>;

/** The scoreboard (src/results/report/results.service.ts `getResults`) with its sources handed in as the process does. */
export const getResults = (
  q: Queryable,
  accountId: string,
  since: number | undefined,
  now = Date.now(),
  returnPath = true,
  o: Options = {},
) => scoreboard(q, accountId, since, now, returnPath, { sources: SCOREBOARD_SOURCES, ...o });
