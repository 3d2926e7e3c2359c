import type { Queryable } from '../db.js';

const DAY = 24 * 60 * 60 * 1000;

export interface AdNumbers {
  impressions: number;
  clicks: number;
  spend: number;
  conversions: number;
}

export interface AdTestResult extends AdNumbers {
  /** The id the ad platform gave the test when it shipped (its `ad_metrics` name it). */
  testId: string;
  cardId: string;
  title: string;
  currency: string | null;
  launchedAt: number;
  endsAt: number;
  costPerConversion: number | null;
  variants: (AdNumbers & { variant: string | null })[];
}

const zero = (): AdNumbers => ({ impressions: 0, clicks: 0, spend: 0, conversions: 0 });
const costPer = (n: AdNumbers) => (n.conversions === 0 ? null : Math.round((n.spend / n.conversions) * 10_000) / 10_000);

/**
 * The ad tests that ran during [since, until] (shipped at or before `until`, their duration not over
 * before `since`), oldest first, at most 50, each with the platform's metrics in that span summed per
 * variant and in all.
 */
export async function adTestsIn(q: Queryable, accountId: string, since: number, until: number): Promise<AdTestResult[]> {
  const fences = (await q('shipments')
    .where({ account_id: accountId, kind_of_work: 'ad_test', status: 'sent' })
    .whereNotNull('provider_id')
    .where('settled_at', '<=', until)
    .whereRaw(`settled_at + coalesce((details->>'durationDays')::bigint, 0) * ? >= ?`, [DAY, since])
    .orderBy('settled_at')
    .limit(50)
    .select('provider_id', 'card_id', 'subject', 'settled_at', 'details')) as {
    provider_id: string;
    card_id: string;
    subject: string;
    settled_at: string | number;
    details: Record<string, unknown> | null;
  }[];
  if (!fences.length) return [];
  const rows = (await q('ad_metrics')
    .where({ account_id: accountId })
    .whereIn(
      'test_id',
      fences.map((f) => f.provider_id),
    )
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
    )) as { test_id: string; variant: string | null; impressions: string; clicks: string; spend: string; conversions: string }[];
  return fences.map((f) => {
    const launchedAt = Number(f.settled_at);
    const days = Number(f.details?.durationDays ?? 0);
    const total = zero();
    const variants = rows
      .filter((r) => r.test_id === f.provider_id)
      .map((r) => {
        const v = {
          impressions: Number(r.impressions),
          clicks: Number(r.clicks),
          spend: Number(r.spend),
          conversions: Number(r.conversions),
        };
        for (const k of Object.keys(total) as (keyof AdNumbers)[]) total[k] += v[k];
        return { variant: r.variant, ...v };
      });
    const currency = typeof f.details?.currency === 'string' ? f.details.currency : null;
    return {
      testId: f.provider_id,
      cardId: f.card_id,
      title: f.subject,
      currency,
      launchedAt,
      endsAt: launchedAt + days * DAY,
      ...total,
      costPerConversion: costPer(total),
      variants,
    };
  });
}
