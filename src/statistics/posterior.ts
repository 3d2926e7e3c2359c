/**
 * The chance each variant has the highest true rate, given what was seen: with a uniform prior each
 * variant's rate has the posterior Beta(1 + outcomes, 1 + exposures − outcomes), and
 *   P(i is best) = ∫ f_i(x) · Π_{j≠i} F_j(x) dx,
 * integrated by the trapezoid rule on one grid spanning every posterior's mass (±12 sd), each density
 * normalised on the grid, so no beta function is needed. Accurate to about 1e-4, which is all the card's two
 * decimals need. These figures describe the data for the card; the decision itself is the sequential test's.
 */
import type { VariantCounts } from './plan.js';

const INTERVALS = 4000;
const SPREAD = 12;

function posteriorMoments(c: VariantCounts): { a: number; b: number; mean: number; sd: number } {
  const a = 1 + c.outcomes;
  const b = 1 + c.exposures - c.outcomes;
  const mean = a / (a + b);
  return { a, b, mean, sd: Math.sqrt((mean * (1 - mean)) / (a + b + 1)) };
}

/** P(variant i has the highest rate) for each variant, summing to 1. */
export function probabilityBest(counts: readonly VariantCounts[]): number[] {
  const posts = counts.map(posteriorMoments);
  const lo = Math.max(1e-12, Math.min(...posts.map((p) => p.mean - SPREAD * p.sd)));
  const hi = Math.min(1 - 1e-12, Math.max(...posts.map((p) => p.mean + SPREAD * p.sd)));
  const h = (hi - lo) / INTERVALS;
  const xs = Array.from({ length: INTERVALS + 1 }, (_, j) => lo + j * h);
  const densities = posts.map(({ a, b }) => {
    const logs = xs.map((x) => (a - 1) * Math.log(x) + (b - 1) * Math.log1p(-x));
    const top = Math.max(...logs);
    const d = logs.map((l) => Math.exp(l - top));
    const total = d.reduce((s, v, j) => s + (j === 0 || j === INTERVALS ? v / 2 : v), 0) * h;
    return d.map((v) => v / total);
  });
  const cdfs = densities.map((d) => {
    const f = new Array<number>(d.length).fill(0);
    for (let j = 1; j < d.length; j++) f[j] = f[j - 1]! + ((d[j - 1]! + d[j]!) * h) / 2;
    return f;
  });
  const raw = densities.map((d, i) =>
    d.reduce((s, v, j) => {
      const others = cdfs.reduce((prod, f, k) => (k === i ? prod : prod * Math.min(1, f[j]!)), 1);
      return s + (j === 0 || j === INTERVALS ? 0.5 : 1) * v * others * h;
    }, 0),
  );
  const sum = raw.reduce((s, v) => s + v, 0);
  return raw.map((v) => v / sum);
}
