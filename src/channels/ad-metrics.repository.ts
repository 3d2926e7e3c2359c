import type { Queryable } from '../db.js';

/** The ad platform's numbers of one test's variant over a span, summed (bigint sums as text). */
export interface AdMetricsRow {
  test_id: string;
  variant: string | null;
  impressions: string;
  clicks: string;
  spend: string;
  conversions: string;
}

/**
 * SQL text for a statement of another area that must read ad metrics inside it (an ad experiment's counts): the poll's
 * rows as a table of (account_id, test_id, variant, impressions, clicks, conversions), a subquery Postgres folds into
 * the statement. Read-only.
 */
export const AD_METRICS_SQL = '(SELECT account_id, test_id, variant, impressions, clicks, conversions FROM ad_metrics)';

/** The ad platform's metrics the poll stored (src/channels/ads-poll.ts), summed per (test, variant) over [since, until]. */
export const adMetricsOf = (q: Queryable, accountId: string, testIds: string[], since: number, until: number): Promise<AdMetricsRow[]> =>
  q('ad_metrics')
    .where({ account_id: accountId })
    .whereIn('test_id', testIds)
    .where('at', '>=', since)
    .where('at', '<=', until)
    .groupBy('test_id', 'variant')
    .orderByRaw('test_id, variant NULLS FIRST')
    .select('test_id', 'variant')
    .select(
      q.raw('sum(impressions)::bigint AS impressions'),
      q.raw('sum(clicks)::bigint AS clicks'),
      q.raw('sum(spend)::bigint AS spend'),
      q.raw('sum(conversions)::bigint AS conversions'),
    ) as unknown as Promise<AdMetricsRow[]>;
