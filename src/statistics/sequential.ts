/**
 * Group-sequential boundaries by alpha spending (Lan & DeMets, Biometrika 1983) with the O'Brien–Fleming-type
 * spending function, two-sided and symmetric, over looks at any information fractions. The crossing
 * probabilities come from the recursive numerical integration of Armitage, McPherson & Rowe (1969), laid out
 * in Jennison & Turnbull, "Group Sequential Methods with Applications to Clinical Trials" (2000), ch. 19:
 * the score statistic S_k = Z_k·√t_k has independent normal increments, so the density of S_k on the
 * continuation region is carried from look to look on a grid and integrated by Simpson's rule.
 */
import { normalCdf, normalPdf, normalQuantile, normalSf } from './normal.js';

/** The alpha spent by information fraction `t`: 4·(1 − Φ(z_{1−α/4} / √t)), α in all at t = 1 (half on each side). */
export function obfSpent(t: number, alpha: number): number {
  if (t <= 0) return 0;
  return 4 * normalSf(normalQuantile(1 - alpha / 4) / Math.sqrt(Math.min(t, 1)));
}

/** The sub-density of S_k on the continuation region after look k, on Simpson-weighted grid points. */
interface Stage {
  t: number;
  xs: Float64Array;
  /** Density × Simpson weight × step, so a sum over the grid is an integral. */
  ws: Float64Array;
}

const START: Stage = { t: 0, xs: Float64Array.of(0), ws: Float64Array.of(1) };
/** Grid points per standard deviation of an increment (Jennison & Turnbull use a similar resolution). */
const POINTS_PER_SD = 12;
const MAX_Z = 40;
const KERNEL_REACH = 9;

/** P(cross above `b`) and P(cross below `−b`) at the next look at `t`, from `prev`, with drift `theta` (E[S_t] = θ·t). */
function crossing(prev: Stage, t: number, b: number, theta: number): { upper: number; lower: number } {
  const sd = Math.sqrt(t - prev.t);
  const shift = theta * (t - prev.t);
  let upper = 0;
  let lower = 0;
  for (let i = 0; i < prev.xs.length; i++) {
    const m = prev.xs[i]! + shift;
    upper += prev.ws[i]! * normalSf((b - m) / sd);
    lower += prev.ws[i]! * normalCdf((-b - m) / sd);
  }
  return { upper, lower };
}

/** The stage after a look at `t` with continuation region (−b, b), under drift `theta`. */
function propagate(prev: Stage, t: number, b: number, theta: number): Stage {
  const sd = Math.sqrt(t - prev.t);
  const shift = theta * (t - prev.t);
  const mean = theta * t;
  const spread = 9 * Math.sqrt(t);
  const lo = Math.max(-b, mean - spread);
  const hi = Math.min(b, mean + spread);
  if (!(hi > lo)) return { t, xs: new Float64Array(0), ws: new Float64Array(0) };
  const step0 = Math.min(sd, Math.sqrt(t)) / POINTS_PER_SD;
  const intervals = Math.min(4000, 2 * Math.ceil((hi - lo) / step0 / 2));
  const h = (hi - lo) / intervals;
  const xs = new Float64Array(intervals + 1);
  const ws = new Float64Array(intervals + 1);
  // Points further than KERNEL_REACH sd from y add nothing a double can hold; prev.xs is sorted, so a window slides.
  const reach = KERNEL_REACH * sd;
  let first = 0;
  let end = 0;
  for (let j = 0; j <= intervals; j++) {
    const y = lo + j * h;
    while (first < prev.xs.length && prev.xs[first]! + shift < y - reach) first++;
    while (end < prev.xs.length && prev.xs[end]! + shift <= y + reach) end++;
    let density = 0;
    for (let i = first; i < end; i++) density += prev.ws[i]! * normalPdf((y - prev.xs[i]! - shift) / sd);
    const simpson = j === 0 || j === intervals ? 1 : j % 2 === 1 ? 4 : 2;
    xs[j] = y;
    ws[j] = ((density / sd) * simpson * h) / 3;
  }
  return { t, xs, ws };
}

/** The z-scale boundary c at `t` whose two-sided crossing probability under the null is `target`. */
function boundaryFor(prev: Stage, t: number, target: number): number {
  if (target <= 0) return MAX_Z;
  let lo = 0;
  let hi = MAX_Z;
  for (let i = 0; i < 60; i++) {
    const c = (lo + hi) / 2;
    const { upper, lower } = crossing(prev, t, c * Math.sqrt(t), 0);
    if (upper + lower > target) lo = c;
    else hi = c;
  }
  return hi;
}

export interface Boundaries {
  /** The z-scale boundary at each look: a winner when |Z_k| ≥ c_k. */
  z: number[];
  /** The alpha spent by each look (two-sided, cumulative). */
  spent: number[];
}

// Boundaries depend only on alpha and the looks so far, so a schedule's stages are kept and shared by every
// caller with the same looks (the service's daily looks, the simulation's 200 runs of one plan).
const stages = new Map<string, { stage: Stage; c: number }>();
const MAX_STAGES = 20_000;

/**
 * Lan–DeMets O'Brien–Fleming-type boundaries for looks at increasing information fractions `fractions`
 * (exposures per variant over the planned sample), two-sided total `alpha`. A look at or past t = 1, or the
 * last one when `finalLook` is set (the audience ran out), spends all the alpha left.
 */
export function spendingBoundaries(fractions: readonly number[], alpha: number, finalLook = false): Boundaries {
  const z: number[] = [];
  const spent: number[] = [];
  let prev = START;
  let spentSoFar = 0;
  let prefix = `${alpha}`;
  fractions.forEach((t, k) => {
    if (!(t > prev.t)) throw new RangeError('look fractions must increase');
    const last = t >= 1 || (finalLook && k === fractions.length - 1);
    prefix += `,${t.toFixed(6)}`;
    const key = last ? `${prefix}!` : prefix;
    let entry = stages.get(key);
    const goal = last ? alpha : obfSpent(t, alpha);
    if (!entry) {
      const c = boundaryFor(prev, t, goal - spentSoFar);
      entry = { stage: propagate(prev, t, c * Math.sqrt(t), 0), c };
      if (stages.size >= MAX_STAGES) stages.clear();
      stages.set(key, entry);
    }
    z.push(entry.c);
    spentSoFar = goal;
    spent.push(goal);
    prev = entry.stage;
  });
  return { z, spent };
}

/** P(some look crosses the upper boundary before any crosses the lower) when E[Z at t = 1] is `drift`. */
export function upperCrossing(fractions: readonly number[], boundaries: readonly number[], drift: number): number {
  let prev = START;
  let power = 0;
  fractions.forEach((t, k) => {
    const b = boundaries[k]! * Math.sqrt(t);
    power += crossing(prev, t, b, drift).upper;
    prev = propagate(prev, t, b, drift);
  });
  return power;
}

/**
 * How much more sample the sequential rule needs than one look at the end for the same power: the ratio
 * (δ_seq / δ_fixed)² of the drifts that give `power` (Jennison & Turnbull's inflation factor).
 */
export function inflationFactor(fractions: readonly number[], alpha: number, power: number): number {
  const key = `${alpha},${power}:${fractions.map((t) => t.toFixed(6)).join(',')}`;
  let factor = inflations.get(key);
  if (factor === undefined) {
    factor = solveInflation(fractions, alpha, power);
    if (inflations.size >= MAX_INFLATIONS) inflations.clear();
    inflations.set(key, factor);
  }
  return factor;
}

/**
 * Inflation factors already worked out, by alpha, power and look fractions: every experiment proposed with the
 * same design and sample asks for the same one, and each costs a second or two of CPU (the secant search below).
 */
const inflations = new Map<string, number>();
const MAX_INFLATIONS = 1_000;

function solveInflation(fractions: readonly number[], alpha: number, power: number): number {
  const z = spendingBoundaries(fractions, alpha).z;
  const fixed = normalQuantile(1 - alpha / 2) + normalQuantile(power);
  // The power rises smoothly with the drift, so the secant method finds it in a few evaluations.
  const gap = (drift: number) => upperCrossing(fractions, z, drift) - power;
  let [x0, x1] = [fixed, fixed * 1.05];
  let [g0, g1] = [gap(x0), gap(x1)];
  for (let i = 0; i < 20 && Math.abs(g1) > 1e-7 && g1 !== g0; i++) {
    [x0, x1] = [x1, x1 - (g1 * (x1 - x0)) / (g1 - g0)];
    [g0, g1] = [g1, gap(x1)];
  }
  return (x1 / fixed) ** 2;
}
