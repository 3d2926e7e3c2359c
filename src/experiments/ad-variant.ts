/**
 * Experiments on an ad (`ad_variant`; docs/decisions/experiments.md, "What can vary: an ad"): the ads its variants
 * are, its plan's defaults, and the counts its looks read. The unit is the impression, and the ad platform assigns
 * it: the experiment ships as ONE ad test of its ads (src/agent/experiments/experiment-ad.ts files it when the experiment starts),
 * the platform serves each variant and reports per variant (`ad_metrics`, src/channels/ads-poll.ts); no hash of
 * ours assigns anything. Counts come from that test's `ad_metrics`: exposures are impressions, outcomes clicks or
 * the platform's conversions.
 */
import { createHash } from 'node:crypto';
import { AD_METRICS_SQL } from '../channels/ad-metrics.repository.js';
import type { Queryable } from '../db.js';
import { CARD_STATES_SQL } from '../review/cards/doors.js';
import { FENCES_SQL } from '../shipping/fence.repository.js';
import type { Metric, VariantCounts } from '../statistics/plan.js';

export const AD_THING = 'ad_variant' as const;

/** One ad as it ships in an ad test (src/channels/ads.adapter.ts AdVariant). */
export interface Ad {
  headline: string;
  body: string;
  url?: string;
}

/** What an ad experiment keeps in its row's `draft` besides ad A: the ad test's budget and duration, and its card once filed. */
export interface AdDraft {
  subject: string;
  body: string;
  ad: { budgetCap: number; currency: string; durationDays: number };
  adTestCardId?: string;
}

/** The metrics an ad can be measured by: the platform reports impressions, clicks and conversions, never replies. */
export const AD_METRICS: readonly Metric[] = ['click_rate', 'conversion_rate'];

/**
 * An ad plan's defaults: a 2% click rate against 3%, and a look after every 500 impressions per variant (the
 * platform reports in batches, so a finer schedule would only skip looks). The platform reports impressions, not
 * people, and one person sees an ad several times and answers alike: the plan assumes 4 impressions per person with
 * an intra-class correlation of 0.2 (design effect 1.6), widening the sample, the test and every interval by it
 * (docs/decisions/experiments.md, "Ads: impressions are not people").
 */
export const AD_DESIGN = {
  baselineRate: 0.02,
  minimumDetectableEffect: 0.01,
  lookEvery: 500,
  clustering: { rho: 0.2, perPerson: 4 },
} as const;

/** A variant's stored text (`value`) and an adopted default's: the ad as JSON. */
export const adValue = (ad: Ad): string => JSON.stringify({ headline: ad.headline, body: ad.body, ...(ad.url ? { url: ad.url } : {}) });

/** The ad a stored value holds, or null when it holds none. */
export function adOf(value: string): Ad | null {
  try {
    const o = JSON.parse(value) as Record<string, unknown>;
    if (typeof o?.headline !== 'string' || typeof o.body !== 'string') return null;
    return { headline: o.headline, body: o.body, ...(typeof o.url === 'string' ? { url: o.url } : {}) };
  } catch {
    return null;
  }
}

/** An ad in words, for its variant's description: "Ship faster": Growth on autopilot. */
export const adWords = (ad: Ad): string => `"${ad.headline}": ${ad.body}`;

/** The card of an ad experiment's one ad test: the same id on every try, so it is never filed twice. */
export const adTestCardId = (accountId: string, experimentId: string): string =>
  `card_a${createHash('sha256').update(`${accountId}\0${experimentId}\0ad_test`).digest('hex').slice(0, 24)}`;

/**
 * The variant an `ad_metrics` label names: the letter of its place in the ad test as shipped (A the first, as the
 * experiment's keys are), or its number (1 the first); null for any other label.
 */
export function variantIndexOf(label: string | null, count: number): number | null {
  const s = (label ?? '').trim().toUpperCase();
  const i = /^[A-Z]$/.test(s) ? s.charCodeAt(0) - 65 : /^\d{1,2}$/.test(s) ? Number(s) - 1 : -1;
  return i >= 0 && i < count ? i : null;
}

interface AdExperiment {
  id: string;
  thing: string;
  draft: unknown;
  plan: { metric: Metric; variants: readonly unknown[] };
}

interface Row {
  card_id: string;
  card_status: string | null;
  settled_at: string | null;
  days: string | null;
  variant: string | null;
  impressions: string | null;
  clicks: string | null;
  conversions: string | null;
}

const DAY = 24 * 60 * 60 * 1000;

/**
 * The counts of the ad experiments in `list` (others are left out), per variant in plan order, in one statement:
 * `exposures` and `sent` every impression the platform reported for the experiment's ad test, `outcomes` its clicks
 * (click_rate) or conversions (conversion_rate). `pending` is 1 while impressions may still come: until the ad test
 * is filed, while its card waits, and while it runs; 0 once its card was dismissed (or settled unsent), or its
 * duration ended before `maturedBy` (the reply window leaves the platform's late reports that long).
 */
export async function adCountsOf(q: Queryable, accountId: string, list: readonly AdExperiment[], maturedBy: number) {
  const out = new Map<string, { counts: VariantCounts[]; sent: number[]; pending: number }>();
  const ads = list.filter((e) => e.thing === AD_THING);
  const cardOf = (e: AdExperiment) => (e.draft as Partial<AdDraft>).adTestCardId ?? null;
  const cards = ads.map(cardOf).filter((c): c is string => c !== null);
  const { rows } = cards.length
    ? ((await q.raw(
        `SELECT x.card_id, c.status AS card_status, s.settled_at, s.details->>'durationDays' AS days,
                m.variant, m.impressions, m.clicks, m.conversions
           FROM unnest(?::text[]) AS x(card_id)
           LEFT JOIN ${CARD_STATES_SQL} c ON c.account_id = ? AND c.id = x.card_id
           LEFT JOIN ${FENCES_SQL} s ON s.account_id = ? AND s.card_id = x.card_id AND s.kind_of_work = 'ad_test' AND s.status = 'sent'
           LEFT JOIN LATERAL (
             SELECT variant, sum(impressions)::bigint AS impressions, sum(clicks)::bigint AS clicks,
                    sum(conversions)::bigint AS conversions
               FROM ${AD_METRICS_SQL} am WHERE account_id = ? AND test_id = s.provider_id GROUP BY variant) m ON true`,
        [cards, accountId, accountId, accountId],
      )) as { rows: Row[] })
    : { rows: [] as Row[] };
  for (const e of ads) {
    const card = cardOf(e);
    const mine = rows.filter((r) => r.card_id === card);
    const n = e.plan.variants.length;
    const counts = Array.from({ length: n }, () => ({ exposures: 0, outcomes: 0 }));
    for (const r of mine) {
      const i = variantIndexOf(r.variant, n);
      if (i === null) continue;
      counts[i]!.exposures += Number(r.impressions ?? 0);
      counts[i]!.outcomes += Number((e.plan.metric === 'conversion_rate' ? r.conversions : r.clicks) ?? 0);
    }
    const first = mine[0];
    const launched = first?.settled_at != null ? Number(first.settled_at) : null;
    const over =
      launched !== null
        ? launched + Number(first!.days ?? 0) * DAY <= maturedBy
        : card !== null && (!first?.card_status || ['dismissed', 'resolved'].includes(first.card_status));
    // A bridge reporting more clicks than impressions cannot make a rate above 1.
    for (const c of counts) c.outcomes = Math.min(c.outcomes, c.exposures);
    out.set(e.id, { counts, sent: counts.map((c) => c.exposures), pending: over ? 0 : 1 });
  }
  return out;
}
