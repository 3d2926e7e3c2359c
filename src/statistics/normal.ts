/**
 * The standard normal distribution: its density, distribution function and quantile, for the power
 * calculation and the sequential boundaries. No statistics package is installed, so these are the
 * standard approximations, each checked against reference values in test/statistics/normal.test.ts.
 */

const SQRT_2PI = Math.sqrt(2 * Math.PI);

/** The polynomial with these coefficients (highest power first) at `x`. */
function horner(coefficients: readonly number[], x: number): number {
  return coefficients.reduce((acc, c) => acc * x + c, 0);
}

/** Density of N(0, 1) at `x`. */
export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / SQRT_2PI;
}

/**
 * P(Z > x) for x ≥ 0, by Hart's algorithm 5666 as given by G. West, "Better approximations to cumulative
 * normal functions" (Wilmott, 2005): double precision to |x| = 3, relative error under 1e-8 in the far tail.
 */
function upperTail(x: number): number {
  if (x > 37) return 0;
  const e = Math.exp(-0.5 * x * x);
  if (x >= 7.07106781186547) {
    let b = x + 0.65;
    for (const k of [4, 3, 2, 1]) b = x + k / b;
    return e / b / 2.506628274631;
  }
  const num = horner(
    [3.52624965998911e-2, 0.700383064443688, 6.37396220353165, 33.912866078383, 112.079291497871, 221.213596169931, 220.206867912376],
    x,
  );
  const den = horner(
    [
      8.83883476483184e-2, 1.75566716318264, 16.064177579207, 86.7807322029461, 296.564248779674, 637.333633378831, 793.826512519948,
      440.413735824752,
    ],
    x,
  );
  return (e * num) / den;
}

/** P(Z ≤ x) for Z ~ N(0, 1). */
export function normalCdf(x: number): number {
  return x >= 0 ? 1 - upperTail(x) : upperTail(-x);
}

/** P(Z > x) for Z ~ N(0, 1), without the cancellation of 1 − Φ(x) in the upper tail. */
export function normalSf(x: number): number {
  return x >= 0 ? upperTail(x) : 1 - upperTail(-x);
}

// P. J. Acklam's rational approximation of the normal quantile (relative error 1.15e-9), coefficients as published.
const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

function acklam(p: number): number {
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return horner(C, q) / (horner(D, q) * q + 1);
  }
  if (p > 1 - P_LOW) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -horner(C, q) / (horner(D, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (horner(A, r) * q) / (horner(B, r) * r + 1);
}

/** The x with Φ(x) = p, for 0 < p < 1: Acklam's approximation refined by one Halley step on Φ, as Acklam recommends. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normal quantile needs 0 < p < 1, got ${p}`);
  const x = acklam(p);
  const e = normalCdf(x) - p;
  const u = e * SQRT_2PI * Math.exp(0.5 * x * x);
  return x - u / (1 + 0.5 * x * u);
}
