import type { z } from 'zod';
import { getResults } from '../../src/results/results.service.js';
import type { Reply, RouteContext } from '../route.js';
import type { ResultsQuery } from './results.schemas.js';

/** GET /results: the per-channel scoreboard for the clamped window and its baseline. */
export async function getResultsRoute({ query }: { query: z.output<typeof ResultsQuery> }, ctx: RouteContext): Promise<Reply> {
  return { body: { results: await getResults(ctx.deps.db, ctx.principal.accountId, query.since) } };
}
