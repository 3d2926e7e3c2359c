/**
 * The stopping rule: at each look, every challenger is compared with the control (variant A) by the pooled
 * two-proportion z statistic against a group-sequential boundary (Lan–DeMets O'Brien–Fleming-type spending,
 * sequential.ts), so looking as often as the service likes never raises the false-winner rate above the
 * plan's alpha. With 3–4 variants each comparison gets alpha / (variants − 1) (Bonferroni). Why this rule:
 * docs/decisions/experiments.md.
 */
import { type Difference, differenceInterval, wilson } from './intervals.js';
import { designEffectOf, type ExperimentPlan, type VariantCounts } from './plan.js';
import { probabilityBest } from './posterior.js';
import { spendingBoundaries } from './sequential.js';

export interface VariantFigures extends VariantCounts {
  key: string;
  rate: number;
  /** The 95% Wilson score interval of the rate. */
  interval: [number, number];
  /** P(this variant's true rate is the highest), uniform prior. */
  probabilityBest: number;
  /** The z statistic against the control; null for the control itself. */
  z: number | null;
}

interface DecisionFigures {
  variants: VariantFigures[];
  /** Exposures of the smallest variant over the planned sample per variant. */
  fraction: number;
  plannedReached: boolean;
  /** The look this call made (record its fraction for the next call), or null when it made none (under the minimum). */
  look: { fraction: number; boundary: number } | null;
  /**
   * Each challenger's difference from the control with its repeated confidence interval at this look's boundary
   * (intervals.ts differenceInterval): valid whenever the experiment ends. Absent on decisions stored before it.
   */
  differences?: Difference[];
  /** Why a `stopped` experiment stopped: a person ended it (no winner, ever), or its audience ran out. */
  stoppedBy?: 'person' | 'audience';
}

export type Decision = DecisionFigures &
  (
    | { state: 'collecting' }
    | { state: 'winner'; winner: { key: string; index: number; z: number; probabilityBest: number } }
    /** The planned sample was reached and no variant crossed its boundary: nothing wins. */
    | { state: 'no_difference' }
    /** The experiment ended short of the planned sample (audience exhausted, or stopped) without a winner. */
    | { state: 'stopped' }
  );

export interface LookInput {
  plan: ExperimentPlan;
  /** Per variant, in the plan's order (the first is the control). */
  counts: readonly VariantCounts[];
  /** The fractions of the earlier looks (each decision's `look.fraction`), in order. */
  earlierLooks: readonly number[];
  /** No more exposures will come because the audience ran out on its own: this look spends what alpha is left. */
  ended?: boolean;
  /**
   * A person ended it (or made nothing pending by dismissing its mail): a decision, not a free look. No winner is
   * declared whatever the counts, so the moment a person picks, after seeing an interim figure, cannot make one
   * (docs/decisions/experiments.md, "A person's stop").
   */
  stoppedByPerson?: boolean;
}

/** The pooled two-proportion z statistic of `b` against `a` (0 when neither has an outcome or both have only outcomes). */
export function pooledZ(a: VariantCounts, b: VariantCounts): number {
  if (a.exposures === 0 || b.exposures === 0) return 0;
  const pooled = (a.outcomes + b.outcomes) / (a.exposures + b.exposures);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / a.exposures + 1 / b.exposures));
  return se > 0 ? (b.outcomes / b.exposures - a.outcomes / a.exposures) / se : 0;
}

function figures(input: LookInput, zs: readonly (number | null)[]): VariantFigures[] {
  const best = probabilityBest(input.counts);
  return input.counts.map((c, i) => ({
    key: input.plan.variants[i]!.key,
    exposures: c.exposures,
    outcomes: c.outcomes,
    rate: c.exposures > 0 ? c.outcomes / c.exposures : 0,
    interval: wilson(c.outcomes, c.exposures),
    probabilityBest: best[i]!,
    z: zs[i]!,
  }));
}

/** The index of the winner at boundary `c`: the challenger furthest above it, or the control when every challenger is below −c. */
function winnerAt(zs: readonly (number | null)[], c: number): number | null {
  const challengers = zs.slice(1).map((z, i) => ({ z: z!, index: i + 1 }));
  const above = challengers.filter((ch) => ch.z >= c).sort((x, y) => y.z - x.z);
  if (above.length > 0) return above[0]!.index;
  return challengers.every((ch) => ch.z <= -c) ? 0 : null;
}

/** The rule's verdict without the card's figures: what the simulation needs at every look, and decide() builds on. */
export interface Verdict {
  state: Decision['state'];
  /** The winner's index in the plan's variants, or null. */
  winner: number | null;
  /** Each variant's z statistic against the control (null for the control). */
  zs: (number | null)[];
  fraction: number;
  plannedReached: boolean;
  look: { fraction: number; boundary: number } | null;
}

/**
 * The rule's verdict on the counts so far. Deterministic: the same counts and earlier looks give the same
 * verdict. No winner before every variant has the plan's minimum sample (no look is made there, so no alpha
 * is spent); at or past the planned sample the look spends all the alpha left, and without a winner the
 * answer is `no_difference`.
 */
export function judge(input: LookInput): Verdict {
  const { plan, counts } = input;
  if (counts.length !== plan.variants.length) throw new RangeError(`expected counts for ${plan.variants.length} variants`);
  // Clustered units (an ad's impressions) carry less information than their count: z shrinks by √(design effect).
  const shrink = Math.sqrt(designEffectOf(plan.clustering));
  const zs = counts.map((c, i) => (i === 0 ? null : pooledZ(counts[0]!, c) / shrink));
  const smallest = Math.min(...counts.map((c) => c.exposures));
  const fraction = smallest / plan.plannedPerVariant;
  const plannedReached = fraction >= 1;
  const base = { zs, fraction, plannedReached };
  const over = input.ended || input.stoppedByPerson;
  if (smallest < plan.minimumPerVariant) return { ...base, look: null, winner: null, state: over ? 'stopped' : 'collecting' };

  const looks = [...input.earlierLooks.filter((t) => t < fraction), fraction];
  const alpha = plan.alpha / (plan.variants.length - 1);
  // A person's stop spends no more than an ordinary look would: its interval is that look's, and it names no winner.
  const c = spendingBoundaries(looks, alpha, input.ended && !input.stoppedByPerson).z.at(-1)!;
  const look = { fraction, boundary: c };
  if (input.stoppedByPerson) return { ...base, look, winner: null, state: 'stopped' };
  const winner = winnerAt(zs, c);
  if (winner !== null) return { ...base, look, winner, state: 'winner' };
  return { ...base, look, winner, state: plannedReached ? 'no_difference' : input.ended ? 'stopped' : 'collecting' };
}

/**
 * The boundary the intervals use: the look's own, or, before the first look (under the minimum sample), the one a
 * look at this fraction would have; with nothing exposed, none (an interval of everything).
 */
function intervalBoundary(input: LookInput, verdict: Verdict, alpha: number): number {
  if (verdict.look) return verdict.look.boundary;
  if (!(verdict.fraction > 0)) return Number.POSITIVE_INFINITY;
  const looks = [...input.earlierLooks.filter((t) => t < verdict.fraction), Math.min(verdict.fraction, 1)];
  return spendingBoundaries(looks, alpha).z.at(-1)!;
}

/** Each challenger's difference from the control with its repeated confidence interval at `c`. */
export function differencesAt(plan: ExperimentPlan, counts: readonly VariantCounts[], c: number): Difference[] {
  const alpha = plan.alpha / (plan.variants.length - 1);
  const de = designEffectOf(plan.clustering);
  return counts.slice(1).map((b, i) => differenceInterval(plan.variants[i + 1]!.key, counts[0]!, b, c, 1 - alpha, de));
}

/** The rule's decision with the figures the card and /results show (judge() says how it decides). */
export function decide(input: LookInput): Decision {
  const verdict = judge(input);
  const variants = figures(input, verdict.zs);
  const alpha = input.plan.alpha / (input.plan.variants.length - 1);
  const differences = differencesAt(input.plan, input.counts, intervalBoundary(input, verdict, alpha));
  const stoppedBy = verdict.state === 'stopped' ? (input.stoppedByPerson ? ('person' as const) : ('audience' as const)) : undefined;
  const base = {
    variants,
    fraction: verdict.fraction,
    plannedReached: verdict.plannedReached,
    look: verdict.look,
    differences,
    ...(stoppedBy ? { stoppedBy } : {}),
  };
  if (verdict.state !== 'winner') return { ...base, state: verdict.state };
  const index = verdict.winner!;
  const w = variants[index]!;
  // The control wins on its weakest lead over a challenger.
  const z = index === 0 ? Math.min(...variants.slice(1).map((v) => -v.z!)) : w.z!;
  return { ...base, state: 'winner', winner: { key: w.key, index, z, probabilityBest: w.probabilityBest } };
}
