/**
 * The planned sample of an experiment: how many contacts each variant needs for the comparison of two
 * proportions to find a given difference, and how much more the sequential rule's looks cost.
 */
import { normalCdf, normalQuantile } from './normal.js';
import { inflationFactor } from './sequential.js';

export interface PowerInput {
  /** The control's expected rate, 0 < p < 1. */
  baselineRate: number;
  /** The smallest absolute difference worth finding (0.02 for 4% → 6%). */
  minimumDetectableEffect: number;
  /** Two-sided false-winner rate in all (divided among the comparisons with the control). */
  alpha: number;
  /** The chance of finding the difference when it is there. */
  power: number;
  /** Variants in the experiment (2–4), the first the control. */
  variants?: number;
}

/**
 * Contacts per variant for a fixed-horizon two-sided test of p1 against p2 with the pooled-variance
 * statistic, without continuity correction (Fleiss, Levin & Paik, "Statistical Methods for Rates and
 * Proportions", 3rd ed., 2003, ch. 4):
 *   n = [z_{1−α/2}·√(2·p̄·q̄) + z_{1−β}·√(p1·q1 + p2·q2)]² / (p1 − p2)²,  p̄ = (p1 + p2) / 2.
 * 4% against 6%, α = 0.05, power 0.8 gives 1,863 (1,862.9 rounded up); power 0.9 gives 2,494.
 * With more than two variants each challenger is compared with the control at α / (variants − 1) (Bonferroni).
 */
export function fixedSamplePerVariant(input: PowerInput): number {
  const p1 = input.baselineRate;
  const p2 = p1 + input.minimumDetectableEffect;
  if (!(p1 > 0 && p1 < 1 && p2 > 0 && p2 < 1 && p1 !== p2)) throw new RangeError('rates must lie in (0, 1) and differ');
  const comparisons = Math.max(1, (input.variants ?? 2) - 1);
  const zAlpha = normalQuantile(1 - input.alpha / comparisons / 2);
  const zBeta = normalQuantile(input.power);
  const pBar = (p1 + p2) / 2;
  const root = zAlpha * Math.sqrt(2 * pBar * (1 - pBar)) + zBeta * Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2));
  return Math.ceil((root * root) / (p2 - p1) ** 2);
}

/**
 * The power one look at `n` per variant has (the same test as fixedSamplePerVariant, solved for the power): what an
 * experiment whose audience runs out at `n` can still promise, about (its final look spends the alpha left).
 */
export function powerAt(input: Omit<PowerInput, 'power'>, n: number): number {
  const p1 = input.baselineRate;
  const p2 = p1 + input.minimumDetectableEffect;
  if (!(n > 0) || !(p1 > 0 && p1 < 1 && p2 > 0 && p2 < 1)) return 0;
  const comparisons = Math.max(1, (input.variants ?? 2) - 1);
  const zAlpha = normalQuantile(1 - input.alpha / comparisons / 2);
  const pBar = (p1 + p2) / 2;
  return normalCdf(
    (Math.abs(p2 - p1) * Math.sqrt(n) - zAlpha * Math.sqrt(2 * pBar * (1 - pBar))) / Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2)),
  );
}

/** Information fractions of looks every `lookEvery` per variant from `minimum` on, the last at `planned`. */
export function lookFractions(planned: number, lookEvery: number, minimum: number): number[] {
  const out: number[] = [];
  for (let n = Math.ceil(minimum / lookEvery) * lookEvery; n < planned; n += lookEvery) if (n > 0) out.push(n / planned);
  out.push(1);
  return out;
}

export interface SequentialSample {
  /** Contacts per variant for one look at the end. */
  fixed: number;
  /** Contacts per variant the sequential rule plans for (the fixed sample × the inflation factor). */
  planned: number;
  inflation: number;
  /** Looks the schedule makes by the planned sample. */
  looks: number;
}

/**
 * The planned sample per variant for the sequential rule: the fixed sample times Jennison & Turnbull's
 * inflation factor for O'Brien–Fleming-type spending over a look every `lookEvery` per variant, starting at
 * the minimum sample (`minimumShare` of the planned sample, at least `minimumFloor`). The look count depends on
 * the planned sample and the inflation on the look count, so the two are worked out twice; they settle at once.
 */
export function sequentialSamplePerVariant(
  input: PowerInput,
  lookEvery: number,
  minimumShare: number,
  minimumFloor: number,
): SequentialSample {
  const fixed = fixedSamplePerVariant(input);
  const alpha = input.alpha / Math.max(1, (input.variants ?? 2) - 1);
  let planned = fixed;
  let inflation = 1;
  let looks = 1;
  for (let round = 0; round < 2; round++) {
    const fractions = lookFractions(planned, lookEvery, minimumSample(planned, minimumShare, minimumFloor));
    inflation = inflationFactor(fractions, alpha, input.power);
    planned = Math.ceil(fixed * inflation);
    looks = fractions.length;
  }
  return { fixed, planned, inflation, looks };
}

/** The minimum sample per variant before any look: a share of the planned sample, never under the floor. */
export function minimumSample(planned: number, share: number, floor: number): number {
  return Math.min(planned, Math.max(floor, Math.ceil(planned * share)));
}
