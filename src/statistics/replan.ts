/**
 * The sample a replan needs (plan.ts replanned): sized so that the power the plan promises is the power the experiment
 * has, though the baseline it is sized on was measured on the control's first contacts. Sizing on the measured rate as
 * if it were the truth (the plan made again, plugged in) falls short three ways, all measured by the simulation in
 * docs/performance/channels-and-experiments.md: the rate is rough (30 outcomes: ±18%), and power is concave in the
 * sample, so a rate measured high costs more power than one measured low gives back; the replan comes the first time
 * the control has enough outcomes, so the rate is read a little high; and the control's first contacts stay in the
 * test, so a rate measured high also pulls the control's final rate up and the difference down.
 *
 * So the sample is the smallest whose assurance reaches the plan's power: the power of the final test conditional on
 * the control's outcomes so far, averaged over what the true rate may be given them (Jeffreys' Beta(k + ½, n − k + ½)
 * posterior, on the logit by 9-point Gauss–Hermite quadrature; O'Hagan, Stevens & Campbell, "Assurance in clinical
 * trial design", Pharmaceutical Statistics 4, 2005). The looks' cost comes in as the inflation factor of the rule's
 * schedule (sequential.ts inflationFactor): the statistic's variance times it, as for a fixed test on the sample
 * over the inflation.
 */
import { normalCdf, normalQuantile } from './normal.js';

/** Probabilists' Gauss–Hermite nodes and weights (weights sum to 1): E[f(Z)], Z standard normal, for 9 points. */
const HERMITE: readonly (readonly [number, number])[] = [
  [-4.512745863399783, 2.2345844007746e-5],
  [-3.20542900285647, 0.00278914132123177],
  [-2.07684797867783, 0.0499164067652179],
  [-1.02325566378913, 0.244097502894939],
  [0, 0.406349206349206],
  [1.02325566378913, 0.244097502894939],
  [2.07684797867783, 0.0499164067652179],
  [3.20542900285647, 0.00278914132123177],
  [4.512745863399783, 2.2345844007746e-5],
];

/** The largest sample a replan asks for: beyond it the plan promises what this sample reaches. */
export const MAX_REPLANNED = 5_000_000;

export interface AssuranceInput {
  /** The control's counts when the plan is made again (its first contacts, which stay in the test). */
  control: { exposures: number; outcomes: number };
  /** The challenger's rate when the control's true rate is `p` (the plan's effect: a lift, or points). */
  challenger: (p: number) => number;
  /** Two-sided alpha of one comparison with the control. */
  alpha: number;
  /** How much more sample the looks cost than one look at the end (1: one look). */
  inflation: number;
  /** The design effect: each unit carries 1 / designEffect of an independent one. */
  designEffect?: number;
}

/**
 * The power of the final test at `n` per variant when the control's true rate is `p`, given its outcomes so far: the
 * challenger's n draws against the control's known first ones and its n − n₁ still to come, by the normal
 * approximation, with the variance times the inflation (the looks' cost).
 */
export function conditionalPower(input: AssuranceInput, n: number, p: number): number {
  const de = input.designEffect ?? 1;
  const n1 = input.control.exposures / de;
  const k = input.control.outcomes / de;
  const units = n / de;
  const q = input.challenger(p);
  if (!(units > 0) || !(q > 0 && q < 1) || !(p > 0 && p < 1)) return 0;
  const still = Math.max(0, units - n1);
  // The control's final rate is (k + its later outcomes) / units: its first outcomes shift the mean by (k − n₁p)/units.
  const mean = q - p - (k - Math.min(n1, units) * p) / units;
  const sd = Math.sqrt(input.inflation * ((q * (1 - q)) / units + (p * (1 - p) * still) / units ** 2));
  const pooled = (p + q) / 2;
  const null0 = Math.sqrt((input.inflation * 2 * pooled * (1 - pooled)) / units);
  return normalCdf((mean - normalQuantile(1 - input.alpha / 2) * null0) / sd);
}

/** The assurance at `n` per variant: conditionalPower averaged over the control's true rate given its outcomes. */
export function assurance(input: AssuranceInput, n: number): number {
  const a = input.control.outcomes + 0.5;
  const b = input.control.exposures - input.control.outcomes + 0.5;
  const centre = Math.log(a / b);
  const spread = Math.sqrt(1 / a + 1 / b);
  let sum = 0;
  for (const [x, w] of HERMITE) sum += w * conditionalPower(input, n, 1 / (1 + Math.exp(-(centre + spread * x))));
  return sum;
}

/**
 * The smallest sample per variant (at least what the control has) whose assurance reaches `power`, and the assurance
 * it has: `power` or more, or, when even MAX_REPLANNED falls short, what that reaches (the plan then promises it).
 */
export function assuredSample(input: AssuranceInput, power: number): { perVariant: number; assurance: number } {
  let lo = Math.max(1, input.control.exposures);
  const first = assurance(input, lo);
  if (first >= power) return { perVariant: lo, assurance: first };
  let hi = lo * 2;
  let atHi = assurance(input, hi);
  while (hi < MAX_REPLANNED && atHi < power) {
    hi = Math.min(MAX_REPLANNED, hi * 2);
    atHi = assurance(input, hi);
  }
  if (atHi < power) return { perVariant: hi, assurance: atHi };
  // Bisection on whole contacts: at most log2(MAX_REPLANNED) ≈ 23 steps; `atHi` stays the assurance at `hi`.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const atMid = assurance(input, mid);
    if (atMid >= power) {
      hi = mid;
      atHi = atMid;
    } else lo = mid;
  }
  return { perVariant: hi, assurance: atHi };
}
