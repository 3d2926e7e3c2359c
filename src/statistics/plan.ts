/**
 * An experiment's plan: what varies, what is measured, on whom, and the sample and looks the stopping rule
 * works to. Made once, when the experiment is proposed, and shown on its card (intervals.ts describePlan).
 */
import { MAX_VARIANTS, MIN_VARIANTS } from './assignment.js';
import { wilson } from './intervals.js';
import { fixedSamplePerVariant, lookFractions, minimumSample, sequentialSamplePerVariant } from './power.js';
import { assuredSample } from './replan.js';
import { inflationFactor } from './sequential.js';

/** What an experiment can measure: the outcome counted per exposed contact, in plain words. */
export const METRICS = {
  reply_rate: { outcomes: 'replies', rate: 'reply rate' },
  positive_reply_rate: { outcomes: 'positive replies', rate: 'positive-reply rate' },
  click_rate: { outcomes: 'clicks', rate: 'click rate' },
  conversion_rate: { outcomes: 'conversions', rate: 'conversion rate' },
} as const;
export type Metric = keyof typeof METRICS;

/** One variant: its letter (A is the control, the current default) and what it is, in words. */
export interface Variant {
  key: string;
  description: string;
}

export interface VariantCounts {
  exposures: number;
  outcomes: number;
}

/**
 * The design defaults (docs/decisions/experiments.md says why): a 3% false-winner rate in all, power 0.95 at
 * the planned sample, so that the targets (at most 5% false winners, at least 90% right picks) hold with room
 * for chance; a look after every 50 contacts per variant, none before a tenth of the plan (at least 100).
 */
export const DESIGN = {
  alpha: 0.03,
  power: 0.95,
  lookEvery: 50,
  minimumShare: 0.1,
  minimumFloor: 100,
  /** The lift the plan looks for when none is given: half the baseline again (4% against 6%). */
  relativeLift: 0.5,
} as const;

/**
 * When the account's own history sets the baseline (docs/decisions/experiments.md, "A measured baseline"): at least
 * this many exposures with at least this many outcomes of the metric; fewer, and the plan assumes its default.
 */
export const HISTORY = { exposures: 1_000, outcomes: 50 } as const;

/** Where a plan's baseline came from: assumed (the default or the caller's), the account's history, or the first look. */
export interface BaselineSource {
  kind: 'assumed' | 'measured' | 'replanned';
  /** The counts it was measured on (measured and replanned). */
  outcomes?: number;
  exposures?: number;
  /** A replanned plan's first baseline and sample, and how many times it was replanned. */
  assumedRate?: number;
  assumedPerVariant?: number;
  replans?: number;
}

/** At most this many replans before the first look (each on more contacts than the last). */
export const REPLANS = 3;
/** A replan needs the control to have this many outcomes: fewer make a rate too rough to size a plan on. */
export const REPLAN_OUTCOMES = 30;

/**
 * Units that are not independent (an ad's impressions: one person sees it several times and answers alike): the
 * assumed intra-class correlation `rho` among one person's `perPerson` impressions, and Kish's design effect
 * 1 + (perPerson − 1)·rho that the sample and every interval are widened by.
 */
export interface Clustering {
  rho: number;
  perPerson: number;
}

export const designEffectOf = (c: Clustering | undefined): number => (c ? 1 + Math.max(0, c.perPerson - 1) * c.rho : 1);

export interface PlanInput {
  id: string;
  hypothesis: string;
  /** The one thing that varies, in words ("the mail subject", "the wait before step 2"). */
  subject: string;
  variants: readonly Variant[];
  metric: Metric;
  audience: string;
  baselineRate: number;
  minimumDetectableEffect: number;
  alpha?: number;
  power?: number;
  lookEvery?: number;
}

/** What a plan may carry beyond its input (absent from plans stored before they existed). */
export interface PlanExtras {
  /** Whether the effect was given in points (absolute) or as a lift on the baseline (relative: kept when replanned). */
  effectKind?: 'absolute' | 'relative';
  baselineSource?: BaselineSource;
  clustering?: Clustering;
  /** How long after its exposure an outcome counts, the same for every variant (EXPERIMENT_REPLY_WINDOW_SECONDS). */
  outcomeWindowMs?: number;
}

export interface ExperimentPlan extends Required<PlanInput>, PlanExtras {
  /** Contacts per variant one look at the end would need. */
  fixedPerVariant: number;
  /** Contacts per variant the sequential rule plans for: the experiment ends by then. */
  plannedPerVariant: number;
  /** No look, and so no winner, before every variant has this many. */
  minimumPerVariant: number;
}

/** At most this many looks in a plan: a big sample looks less often (each look costs the boundary's integration). */
export const MAX_LOOKS = 72;

/** The look cadence: `floor` per variant, or coarser (a multiple of 50) so that the fixed sample has at most MAX_LOOKS looks. */
function cadence(input: PlanInput, alpha: number, power: number, floor: number): number {
  const fixed = fixedSamplePerVariant({
    baselineRate: input.baselineRate,
    minimumDetectableEffect: input.minimumDetectableEffect,
    alpha,
    power,
    variants: input.variants.length,
  });
  return Math.max(floor, Math.ceil(fixed / MAX_LOOKS / 50) * 50);
}

/** The plan for `input`, with its planned and minimum sample from the power calculation. */
export function planExperiment(input: PlanInput & PlanExtras): ExperimentPlan {
  const count = input.variants.length;
  if (count < MIN_VARIANTS || count > MAX_VARIANTS) throw new RangeError(`an experiment has ${MIN_VARIANTS} to ${MAX_VARIANTS} variants`);
  const alpha = input.alpha ?? DESIGN.alpha;
  const power = input.power ?? DESIGN.power;
  const lookEvery = cadence(input, alpha, power, input.lookEvery ?? DESIGN.lookEvery);
  const sample = sequentialSamplePerVariant(
    { baselineRate: input.baselineRate, minimumDetectableEffect: input.minimumDetectableEffect, alpha, power, variants: count },
    lookEvery,
    DESIGN.minimumShare,
    DESIGN.minimumFloor,
  );
  const inflate = designEffectOf(input.clustering);
  const planned = Math.ceil(sample.planned * inflate);
  return {
    ...input,
    alpha,
    power,
    lookEvery,
    fixedPerVariant: Math.ceil(sample.fixed * inflate),
    plannedPerVariant: planned,
    minimumPerVariant: minimumSample(planned, DESIGN.minimumShare, DESIGN.minimumFloor),
  };
}

/**
 * The plan again on the control's observed rate, before the first look is recorded, when that rate is far from the
 * plan's baseline: its 95% interval leaves out the baseline and it is under 0.8 or over 1.25 times it. The new plan's
 * minimum sample may put the first look later; there the rate (on more contacts) is checked again, up to
 * REPLANS times. The effect keeps its kind (a lift stays the same lift; points stay points); everything else stays.
 * Null when the rate is near enough, or the plan has no `baselineSource`; `wait` while the control has fewer than
 * REPLAN_OUTCOMES outcomes and the rate is far, or the baseline was only assumed and the plan expects that many of
 * the control (on a few outcomes an interval wide enough to hold the assumption says nothing about it): the first
 * look then waits for more, spending nothing. Only
 * the control's rate is used, and no look has spent alpha yet, so the rule's false-winner rate holds. The new sample
 * is sized for the plan's power allowing for how rough the measured rate is (replannedSample); the simulation's rows
 * in docs/performance/channels-and-experiments.md measure both.
 */
export function replanned(plan: ExperimentPlan, control: VariantCounts): ExperimentPlan | 'wait' | null {
  // A plan that does not say where its baseline came from (made before plans did, or by hand) is left as it is.
  if (!plan.baselineSource || (plan.baselineSource.replans ?? 0) >= REPLANS || control.exposures === 0) return null;
  const observed = control.outcomes / control.exposures;
  const [lo, hi] = wilson(control.outcomes, control.exposures);
  const far =
    (plan.baselineRate < lo || plan.baselineRate > hi) && (observed < plan.baselineRate / 1.25 || observed > plan.baselineRate * 1.25);
  const few = control.outcomes < REPLAN_OUTCOMES;
  // Near, on a few outcomes of an assumed baseline: not yet known to be near, unless the plan expects no more than that.
  const checkable = plan.baselineSource.kind === 'assumed' && plan.plannedPerVariant * plan.baselineRate >= REPLAN_OUTCOMES;
  if (!far) return few && checkable ? 'wait' : null;
  // Far, but on too few outcomes to plan on: the first look waits (no alpha spent) until the control has enough.
  if (few) return 'wait';
  // A rate of 0 so far plans on half an outcome, never on 0.
  const baselineRate = Math.min(0.9, Math.max(observed, 0.5 / control.exposures));
  const lift = plan.minimumDetectableEffect / plan.baselineRate;
  const relative = plan.effectKind === 'relative';
  const effect = relative ? baselineRate * lift : plan.minimumDetectableEffect;
  const minimumDetectableEffect = Math.min(effect, 0.99 - baselineRate);
  const sized = replannedSample(plan, control, (p) => Math.min(0.99, relative ? p * (1 + lift) : p + minimumDetectableEffect));
  return {
    ...plan,
    baselineRate,
    minimumDetectableEffect,
    ...sized,
    baselineSource: {
      kind: 'replanned',
      outcomes: control.outcomes,
      exposures: control.exposures,
      assumedRate: plan.baselineSource?.assumedRate ?? plan.baselineRate,
      assumedPerVariant: plan.baselineSource?.assumedPerVariant ?? plan.plannedPerVariant,
      replans: (plan.baselineSource?.replans ?? 0) + 1,
    },
  };
}

/**
 * A replanned plan's sample, cadence and promise (replan.ts): the smallest sample whose assurance, given the control's
 * outcomes so far, reaches the plan's power, for one look at the end (`fixedPerVariant`) and for the rule's looks (the
 * inflation factor of its schedule, the planned sample rounded up to whole look intervals, worked out twice as
 * sequentialSamplePerVariant does). The power promised is the plan's, or what MAX_REPLANNED reaches when it is less.
 * The first look is at the first whole look interval the control has reached (a wave later when it is between two).
 */
function replannedSample(
  plan: ExperimentPlan,
  control: VariantCounts,
  challenger: (p: number) => number,
): Pick<ExperimentPlan, 'fixedPerVariant' | 'plannedPerVariant' | 'minimumPerVariant' | 'lookEvery' | 'power'> {
  const alpha = plan.alpha / Math.max(1, plan.variants.length - 1);
  const base = { control, challenger, alpha, designEffect: designEffectOf(plan.clustering) };
  const fixed = assuredSample({ ...base, inflation: 1 }, plan.power);
  const lookEvery = Math.max(plan.lookEvery, Math.ceil(fixed.perVariant / MAX_LOOKS / 50) * 50);
  let planned = fixed;
  for (let round = 0; round < 2; round++) {
    // On whole look intervals, so plans with as many looks share one inflation factor (sequential.ts keeps it).
    const grid = Math.ceil(planned.perVariant / lookEvery) * lookEvery;
    const fractions = lookFractions(grid, lookEvery, minimumSample(grid, DESIGN.minimumShare, DESIGN.minimumFloor));
    planned = assuredSample({ ...base, inflation: inflationFactor(fractions, alpha, plan.power) }, plan.power);
  }
  // Whole look intervals, and the first look on one: every replanned experiment with as many looks then looks at the
  // same fractions, so they share their boundaries too (sequential.ts keeps them).
  const plannedPerVariant = Math.ceil(planned.perVariant / lookEvery) * lookEvery;
  const onGrid = Math.ceil(control.exposures / lookEvery) * lookEvery;
  return {
    fixedPerVariant: fixed.perVariant,
    plannedPerVariant,
    minimumPerVariant: Math.min(
      plannedPerVariant,
      Math.max(onGrid, minimumSample(plannedPerVariant, DESIGN.minimumShare, DESIGN.minimumFloor)),
    ),
    lookEvery,
    power: Math.min(plan.power, planned.assurance),
  };
}
