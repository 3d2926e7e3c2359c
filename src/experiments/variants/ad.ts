/**
 * `ad_variant` (docs/decisions/experiments.md, "What can vary: an ad"): proposed with 2–4 ads, a budget cap, currency
 * and duration on an account with an `ads` connection and a monthly spend cap that allows the budget. The unit is the
 * impression, and the ad platform assigns it: the experiment starts by filing ONE `ad_test` card of its ads (which
 * waits under the account's ad test approval settings and ships through the fenced path like any ad test); the
 * platform serves each variant and reports per variant (`ad_metrics`, src/channels/ads-poll.ts); no hash of ours
 * assigns anything. Counts come from that test's `ad_metrics`: exposures are impressions, outcomes clicks or the
 * platform's conversions. A winner approved becomes the default ad later ad tests about the topic start from.
 */
import { createHash } from 'node:crypto';
import { adTestProblem } from '../../channels/ads.adapter.js';
import { AD_METRICS_SQL } from '../../channels/ad-metrics.repository.js';
import { cannotShip } from '../../channels/registry.js';
import { money, monthStart, spendCapOf } from '../../channels/spend-cap.js';
import type { Db, Queryable } from '../../db.js';
import { newId } from '../../ids.js';
import { needsApproval } from '../../review/approval.service.js';
import { CARD_STATES_SQL } from '../../review/cards/doors.js';
import { privateTextIn } from '../../review/cards/private-text.js';
import { fileWork } from '../../review/file-work.service.js';
import { FENCES_SQL, fencesRepository } from '../../shipping/fence.repository.js';
import { VARIANT_KEYS } from '../../statistics/assignment.js';
import { METRICS, type Metric, planExperiment } from '../../statistics/plan.js';
import { describePlan } from '../../statistics/wording.js';
import type { Counted, Experiment, ExperimentCounts } from '../experiment.js';
import { fileExperiment, type Proposer } from '../experiment-card.js';
import { experimentRows } from '../experiment-rows.js';
import { adoptAsDefault, type OwnWorkKind, type Proposal } from './kind.js';

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
 * The counts of the ad experiments `ads` (the kind's `counts`), per variant in plan order, in one statement, into `out`:
 * `exposures` and `sent` every impression the platform reported for the experiment's ad test, `outcomes` its clicks
 * (click_rate) or conversions (conversion_rate). `pending` is 1 while impressions may still come: until the ad test
 * is filed, while its card waits, and while it runs; 0 once its card was dismissed (or settled unsent), or its
 * duration ended before `maturedBy` (the reply window leaves the platform's late reports that long).
 */
async function adCounts(q: Queryable, accountId: string, ads: readonly Counted[], maturedBy: number, out: Map<string, ExperimentCounts>) {
  const cardOf = (e: Counted) => (e.draft as Partial<AdDraft>).adTestCardId ?? null;
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
}

const AUDIENCE = 'impressions the ad platform serves while the ad test runs; the platform, not this service, picks each one’s ad';
const REVIEW_AD = 'Review before it ships: nothing is spent until it does.';
/** How an ad test the experiment started ends: the bridge has no call to stop one (docs/provider-bridge.md). */
const ENDS = 'The ad test itself runs on until its budget cap or duration ends; stop it early in the ad account if you wish.';

/** Why the account's monthly spend cap does not allow `budget` (minor units) in `currency`, or null when it does. */
async function spendCapProblem(q: Queryable, accountId: string, budget: number, currency: string, at: number): Promise<string | null> {
  const cap = await spendCapOf(q, accountId);
  if (!cap)
    return 'no monthly spend cap is set on this account; the operator sets one (channel spend-cap) before an ad experiment can spend';
  if (cap.currency !== currency) return `the budget is in ${currency} but the monthly spend cap is in ${cap.currency}`;
  // Used this month as the spend adapter counts it (spend-cap.ts checkSpendCap): the shipping path's spend fences.
  const left = Math.max(0, cap.monthlyCap - (await fencesRepository(q).increasesSince(accountId, 'spend', monthStart(at))));
  if (budget <= left) return null;
  return `a budget cap of ${money(budget, currency)} would pass the monthly spend cap: ${money(left, currency)} is left this month`;
}

/**
 * Proposes an ad experiment: checks its ads, metric, budget, connection and spend cap, plans its sample in
 * impressions (power.ts), and files its `experiment` card. Refused (a string back, nothing written) on any of those.
 */
async function proposeAdExperiment(db: Db, by: Proposer, input: Proposal): Promise<{ id: string; cardId: string } | string> {
  const p = input.ad;
  if (!p || !Array.isArray(p.ads) || p.ads.length < 2 || p.ads.length > 4) return 'an ad experiment has 2 to 4 ads';
  const metric = input.metric ?? 'click_rate';
  if (!AD_METRICS.includes(metric)) {
    const rate = METRICS[metric].rate;
    return (
      `an ad cannot be measured by its ${rate}: the ad platform reports impressions, clicks and conversions, not replies; ` +
      'use click_rate or conversion_rate'
    );
  }
  const ads = p.ads.map((a) => ({ headline: a.headline.trim(), body: a.body.trim(), ...(a.url ? { url: a.url.trim() } : {}) }));
  const problem = adTestProblem({ variants: ads, budgetCap: p.budgetCap, currency: p.currency, durationDays: p.durationDays });
  if (problem) return problem;
  if (new Set(ads.map((a) => `${a.headline}\n${a.body}`.toLowerCase())).size !== ads.length) return 'the ads must differ from each other';
  const quotes = await privateTextIn(
    db,
    by.accountId,
    ads.flatMap((a) => [a.headline, a.body]),
  );
  if (quotes) return `the experiment ${quotes}, so nothing was proposed; write it in your own words`;
  const missing = await cannotShip(db, by.accountId, 'ad_test');
  if (missing) return `an ad experiment runs as an ad test, and ${missing}`;
  const budget = { budgetCap: p.budgetCap as number, currency: p.currency as string, durationDays: p.durationDays as number };
  const capped = await spendCapProblem(db, by.accountId, budget.budgetCap, budget.currency, Date.now());
  if (capped) return capped;
  const baselineRate = input.baselineRate ?? AD_DESIGN.baselineRate;
  const minimumDetectableEffect = input.minimumDetectableEffect ?? AD_DESIGN.minimumDetectableEffect;
  if (baselineRate + minimumDetectableEffect >= 1) return 'the baseline rate and the effect must add up to less than 1';

  const id = newId('exp');
  const variants = ads.map((ad, i) => ({ key: VARIANT_KEYS[i]!, description: adWords(ad), value: adValue(ad) }));
  const plan = planExperiment({
    id,
    hypothesis: input.hypothesis ?? `the ad changes the ${metric.replace(/_/g, ' ')} of ads about ${input.topic}.`,
    subject: `the ad about ${input.topic}`,
    variants,
    metric,
    audience: AUDIENCE,
    baselineRate,
    minimumDetectableEffect,
    lookEvery: AD_DESIGN.lookEvery,
    // The platform assigns impressions, not people: one person's impressions answer alike (ad-variant.ts AD_DESIGN).
    clustering: AD_DESIGN.clustering,
  });
  const storedPlan = { ...plan, variants };
  const adNeeds = await needsApproval(db, by.accountId, 'ad_test');
  const waits = adNeeds
    ? 'waits under your ad test approval settings: nothing is spent before that is approved'
    : 'this account ships without approval';
  const cap = money(budget.budgetCap, budget.currency);
  const test = `On start it files one ad test of these ads (budget cap ${cap}, ${budget.durationDays} days), which ${waits}.`;
  const draft: AdDraft = { subject: ads[0]!.headline, body: ads[0]!.body, ad: budget };
  return fileExperiment(db, by, {
    id,
    thing: AD_THING,
    topic: input.topic,
    plan: storedPlan,
    draft,
    audience: [],
    title: `Experiment: the ad for "${input.topic}"`,
    details: { variants, metric, plannedPerVariant: plan.plannedPerVariant, ...budget },
    prompt: (needs) =>
      `${describePlan(storedPlan, { unit: 'impression', control: 'the control' })}\n${test}\n${
        needs ? 'Approve to start it.' : 'This account lets experiments start without approval.'
      }`,
  });
}

/**
 * Files a running ad experiment's one `ad_test` card (its ads in plan order, so the platform's variant A is ours;
 * payload `experimentId`) under the account's ad test approval settings; the same card id on every try and a claim
 * on the experiment's row make it once. Answers how many it filed (0 or 1).
 */
async function fileAdExperimentTest(db: Db, e: Experiment): Promise<number> {
  const { ad, adTestCardId: filed } = e.draft as unknown as AdDraft;
  if (e.thing !== AD_THING || e.status !== 'running' || filed) return 0;
  const variants = e.plan.variants.map((v) => adOf(v.value)).filter((a): a is Ad => a !== null);
  const id = adTestCardId(e.accountId, e.id);
  return db.transaction(async (trx) => {
    if (!(await experimentRows(trx).claimCard(e.accountId, e.id, 'adTestCardId', id))) return 0;
    await fileWork(trx, {
      accountId: e.accountId,
      turnId: null,
      fromOutside: false,
      work: 'ad_test',
      id,
      title: `Ad test of experiment ${e.id}: the ad for "${e.topic}"`.slice(0, 200),
      details: { experimentId: e.id, topic: e.topic, variants, ...ad },
      prompt: (needs) => ({
        prompt:
          `Experiment ${e.id} started: this ad test runs its ${variants.length} ads (A to ${e.plan.variants.at(-1)!.key}) ` +
          `with a budget cap of ${money(ad.budgetCap, ad.currency)} for ${ad.durationDays} days; the platform's counts per ` +
          `variant decide it. ${needs ? REVIEW_AD : 'This account lets ad tests run without approval.'}`,
      }),
    });
    return 1;
  });
}

/** An ad experiment's result card in ad words: later ad tests (not mail) start from the winner; how its ad test ends. */
function adResultCard<C extends { summary: string; prompt: string; payload: Record<string, unknown> }>(e: Experiment, card: C): C {
  if (e.thing !== AD_THING) return card;
  const winner = e.plan.variants.find((v) => v.key === card.payload.winner);
  const prompt = winner
    ? `${card.summary}. Approve to make ${winner.key} (${winner.description}) the default ad later ad tests about ${e.topic} start ` +
      `from. ${ENDS}`
    : `${card.summary}. No ad did better than chance allows, so the experiment stopped and later ad tests keep their own ads. ${ENDS}`;
  return { ...card, prompt };
}

interface ShipArgs {
  work: string;
  title: string;
  details?: Record<string, unknown>;
}

/**
 * An `ad_test` the agent ships about a topic an ad experiment decided (its `details.topic`, else its title) starts
 * from the adopted ad: it becomes variant 1 (A), the agent's own ads follow (a copy of it dropped, at most 5 in all),
 * and the card's payload says so (`defaultAd`). `used` is what the tool result adds.
 */
export async function withDefaultAd<A extends ShipArgs>(q: Queryable, accountId: string, args: A): Promise<{ args: A; used: string }> {
  if (args.work !== 'ad_test') return { args, used: '' };
  const given = args.details?.topic;
  const topic = typeof given === 'string' && given.trim() ? given.trim() : args.title.trim();
  const stored = await experimentRows(q).defaultFor(accountId, AD_THING, topic);
  const ad = stored ? adOf(stored) : null;
  if (!ad) return { args, used: '' };
  const own = Array.isArray(args.details?.variants) ? (args.details.variants as Record<string, unknown>[]) : [];
  const same = (v: Record<string, unknown>) =>
    `${v?.headline}\n${v?.body}`.trim().toLowerCase() === `${ad.headline}\n${ad.body}`.toLowerCase();
  const variants = [ad, ...own.filter((v) => !same(v))].slice(0, 5);
  const note = `Variant 1 is the default ad an experiment decided for "${topic}": ${adWords(ad)}`;
  return {
    args: { ...args, details: { ...args.details, variants, defaultAd: note } },
    used: `; it starts from the default ad an experiment decided for "${topic}" (variant 1: ${adWords(ad)})`,
  };
}

export const adVariant: OwnWorkKind<'ad_variant'> = {
  thing: AD_THING,
  reaches: 'its own work',
  words: 'the ad',
  startedWorkWaits: 'its ad test waits under the ad test settings',
  // The platform assigns impressions, not our hash: their split says nothing of ours.
  ratio: null,
  // The plan's clustered sample is not replanned on the control's rate.
  replans: false,
  counts: adCounts,
  propose: proposeAdExperiment,
  start: fileAdExperimentTest,
  resultCard: adResultCard,
  adopt: (db, e, value, at) => adoptAsDefault(db, e, at, () => value),
};
