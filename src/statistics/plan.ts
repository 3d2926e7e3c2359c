/**
 * An experiment's plan: what varies, what is measured, on whom, and the sample and looks the stopping rule
 * works to. Made once, when the experiment is proposed, and shown on its card (intervals.ts describePlan).
 */
import { MAX_VARIANTS, MIN_VARIANTS } from './assignment.js';
import { minimumSample, sequentialSamplePerVariant } from './power.js';

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
} as const;

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

export interface ExperimentPlan extends Required<PlanInput> {
  /** Contacts per variant one look at the end would need. */
  fixedPerVariant: number;
  /** Contacts per variant the sequential rule plans for: the experiment ends by then. */
  plannedPerVariant: number;
  /** No look, and so no winner, before every variant has this many. */
  minimumPerVariant: number;
}

/** The plan for `input`, with its planned and minimum sample from the power calculation. */
export function planExperiment(input: PlanInput): ExperimentPlan {
  const count = input.variants.length;
  if (count < MIN_VARIANTS || count > MAX_VARIANTS) throw new RangeError(`an experiment has ${MIN_VARIANTS} to ${MAX_VARIANTS} variants`);
  const alpha = input.alpha ?? DESIGN.alpha;
  const power = input.power ?? DESIGN.power;
  const lookEvery = input.lookEvery ?? DESIGN.lookEvery;
  const sample = sequentialSamplePerVariant(
    { baselineRate: input.baselineRate, minimumDetectableEffect: input.minimumDetectableEffect, alpha, power, variants: count },
    lookEvery,
    DESIGN.minimumShare,
    DESIGN.minimumFloor,
  );
  return {
    ...input,
    alpha,
    power,
    lookEvery,
    fixedPerVariant: sample.fixed,
    plannedPerVariant: sample.planned,
    minimumPerVariant: minimumSample(sample.planned, DESIGN.minimumShare, DESIGN.minimumFloor),
  };
}
