/**
 * Experiments on an ad (docs/decisions/experiments.md, "What can vary: an ad"): proposed with 2–4 ads, a budget cap,
 * currency and duration on an account with an `ads` connection and a monthly spend cap that allows the budget;
 * started by filing ONE `ad_test` card of its ads (which then waits under the account's ad test approval settings and
 * ships through the fenced path like any ad test); read from that test's `ad_metrics` (src/experiments/ad-variant.ts);
 * a winner approved becomes the default ad later ad tests about the topic start from.
 */
import { VARIANT_KEYS } from '../../statistics/assignment.js';
import type { Db, Queryable } from '../../db.js';
import { adTestProblem } from '../../channels/ads.adapter.js';
import { cannotShip } from '../../channels/registry.js';
import { money, monthStart, spendCapOf } from '../../channels/spend-cap.js';
import { fencesRepository } from '../../shipping/fence.repository.js';
import {
  AD_DESIGN,
  AD_METRICS,
  AD_THING,
  type Ad,
  type AdDraft,
  adOf,
  adTestCardId,
  adValue,
  adWords,
} from '../../experiments/ad-variant.js';
import { type Experiment, experimentsRepository } from '../../experiments/experiments.repository.js';
import { METRICS, type Metric, planExperiment } from '../../statistics/plan.js';
import { describePlan } from '../../statistics/wording.js';
import { newId } from '../../ids.js';
import { needsApproval } from '../../review/approval.service.js';
import { privateTextIn } from '../../review/cards/private-text.js';
import { fileExperiment, type Proposer } from './experiment-card.js';
import { fileWork } from '../tools/file-work.js';

/** An ad experiment's own input: its ads (the first is A, the control), and the ad test's budget and duration. */
export interface AdProposal {
  ads: Ad[];
  budgetCap?: unknown;
  currency?: unknown;
  durationDays?: unknown;
}

interface Input {
  topic: string;
  hypothesis?: string;
  metric?: Metric;
  baselineRate?: number;
  minimumDetectableEffect?: number;
  ad?: AdProposal;
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
export async function proposeAdExperiment(db: Db, by: Proposer, input: Input): Promise<{ id: string; cardId: string } | string> {
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
export async function fileAdExperimentTest(db: Db, e: Experiment): Promise<number> {
  const { ad, adTestCardId: filed } = e.draft as unknown as AdDraft;
  if (e.thing !== AD_THING || e.status !== 'running' || filed) return 0;
  const variants = e.plan.variants.map((v) => adOf(v.value)).filter((a): a is Ad => a !== null);
  const id = adTestCardId(e.accountId, e.id);
  return db.transaction(async (trx) => {
    if (!(await experimentsRepository(trx).claimCard(e.accountId, e.id, 'adTestCardId', id))) return 0;
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
export function adResultCard<C extends { summary: string; prompt: string; payload: Record<string, unknown> }>(e: Experiment, card: C): C {
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
  const stored = await experimentsRepository(q).defaultFor(accountId, AD_THING, topic);
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
