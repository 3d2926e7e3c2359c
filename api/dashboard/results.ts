import { hasReturnPath } from '../../src/results/report/results.service.js';
import { getSeries } from '../../src/results/report/series.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { scoreboardSources } from '../routes/results.js';
import { SeriesQuery, SeriesReply } from './results.schemas.js';

/**
 * The Results page's one route of its own (docs/dashboard.md, "Results"): each channel's `/results` figures over time,
 * for its charts. Everything else the page shows is `GET /api/v1/results` under /dashboard/api/v1.
 */
export const resultsSeriesRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/results/series',
    operationId: 'getResultsSeries',
    summary: "Each channel's figures per hour (the last 24 hours) or per UTC day (the last 7 or 30 days)",
    auth: 'session',
    scope: 'results:read',
    bucket: 'reads',
    query: SeriesQuery,
    responses: { 200: { description: 'The figures per bucket, or why a channel has none', schema: SeriesReply } },
  }).handle(async ({ query }, ctx) => {
    const { db, config } = ctx.deps;
    const { accountId } = ctx.principal;
    const returnPath = await hasReturnPath(db, accountId, config.inbound.smtpPort, scoreboardSources);
    return { body: await getSeries(db, accountId, query.window ?? '24h', returnPath) };
  }),
];
