/**
 * The sample ratio check: are the variants' counts what the planned split makes likely? Each exposure lands in a
 * variant with the plan's share (an even split: assignment.ts hashes every contact uniformly), so the counts are
 * multinomial and Pearson's chi-square goodness-of-fit statistic against the planned shares has k − 1 degrees of
 * freedom. A mismatch means something other than chance took contacts out of (or put them into) one variant: a
 * reviewer dismissing one variant's mail, sends refused for one subject, a window closed for one variant. Then the
 * comparison is no longer between like groups, and no figure from it can be trusted (docs/decisions/experiments.md,
 * "Sample ratio mismatch").
 */
import { normalSf } from './normal.js';

/** The threshold: a mismatch only when the planned split makes counts this uneven less than once in a thousand. */
export const RATIO_CHECK_P = 0.001;

/**
 * P(χ²_df > x) for 1 to 3 degrees of freedom (an experiment has 2 to 4 variants), in closed form:
 * df 1: 2·Q(√x); df 2: e^(−x/2); df 3: 2·Q(√x) + √(2x/π)·e^(−x/2), Q the normal upper tail.
 */
export function chiSquareSf(x: number, df: number): number {
  if (x <= 0) return 1;
  if (df === 1) return 2 * normalSf(Math.sqrt(x));
  if (df === 2) return Math.exp(-x / 2);
  if (df === 3) return 2 * normalSf(Math.sqrt(x)) + Math.sqrt((2 * x) / Math.PI) * Math.exp(-x / 2);
  throw new RangeError(`the ratio check handles 1 to 3 degrees of freedom, got ${df}`);
}

export interface RatioCheck {
  /** Pearson's statistic against the planned shares. */
  chiSquare: number;
  /** P(counts at least this uneven) under the planned split. */
  p: number;
  mismatch: boolean;
  /** Each variant's count and what the planned split expects of the same total. */
  observed: number[];
  expected: number[];
}

/** The check of `counts` (one per variant, plan order) against `shares` (an even split unless given). */
export function sampleRatioCheck(counts: readonly number[], shares?: readonly number[], threshold = RATIO_CHECK_P): RatioCheck {
  const k = counts.length;
  const planned = shares ?? counts.map(() => 1 / k);
  const total = counts.reduce((s, n) => s + n, 0);
  const expected = planned.map((s) => s * total);
  if (total === 0) return { chiSquare: 0, p: 1, mismatch: false, observed: [...counts], expected };
  const chiSquare = counts.reduce((s, n, i) => s + (n - expected[i]!) ** 2 / expected[i]!, 0);
  const p = chiSquareSf(chiSquare, k - 1);
  return { chiSquare, p, mismatch: p < threshold, observed: [...counts], expected };
}
