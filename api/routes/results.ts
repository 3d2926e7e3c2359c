import type { z } from 'zod';
import { AGENT_TURNS_SQL } from '../../src/agent/core/doors.js';
import { readExperiments } from '../../src/experiments/reading.js';
import { inboundUrlsRepository } from '../../src/inbound/inbound-urls.repository.js';
import { getResults, hasReturnPath, type ScoreboardSources } from '../../src/results/report/results.service.js';
import { WORKFLOW_RUNS_SQL } from '../../src/workflows/runs.repository.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { ResultsQuery, ResultsResponse } from './results.schemas.js';

/** What the scoreboard reads of the areas above it (the agent's turns, workflow runs, inbound URLs), from their owners. */
export const scoreboardSources: ScoreboardSources = {
  turns: AGENT_TURNS_SQL,
  workflowRuns: WORKFLOW_RUNS_SQL,
  hasInboundUrl: (q, accountId) => inboundUrlsRepository(q).has(accountId),
};

export const resultsRoutes: RouteDef[] = [
  /** The per-channel scoreboard for the clamped window and its baseline. */
  defineRoute({
    method: 'get',
    path: '/api/v1/results',
    operationId: 'getResults',
    summary: 'Per-channel scoreboard for a window and its baseline',
    scope: 'results:read',
    bucket: 'reads',
    query: ResultsQuery,
    responses: { 200: { description: 'The scoreboard', schema: ResultsResponse } },
  }).handle(async ({ query }, ctx) => {
    const { db, config } = ctx.deps;
    const { accountId } = ctx.principal;
    const returnPath = await hasReturnPath(db, accountId, config.inbound.smtpPort, scoreboardSources);
    const results = await getResults(db, accountId, query.since, Date.now(), returnPath, {
      sources: scoreboardSources,
      replyWindowMs: config.experiments.replyWindowMs,
      readExperiments,
    });
    // The service types a channel's metrics as a record (one per channel); the schema names each one,
    // so this shape is checked at run time (CHECK_RESPONSES), not here.
    return { body: { results: results as z.input<typeof ResultsResponse>['results'] } };
  }),
];
