/**
 * Whole experiments run against a stand-in audience whose true rates are known, to measure what the
 * stopping rule does: how often it picks the better variant, how often it names a winner when there is
 * none, and how much sample it uses. Seeded, so a run is repeated exactly. Used by the unit tests and by
 * bench/experiments.bench.ts.
 */
import type { ExperimentPlan, VariantCounts } from './plan.js';
import { judge } from './stopping.js';

/**
 * A seeded generator of uniform numbers in [0, 1): sfc32 (C. Doty-Humphrey's "small fast counting" generator,
 * passes PractRand), its state filled from the seed by splitmix32 and warmed up by 12 rounds as its author does.
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  const splitmix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let [a, b, c, d] = [splitmix(), splitmix(), splitmix(), 1];
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** Outcomes among `n` contacts whose true rate is `p`: one Bernoulli draw each, as a real audience answers. */
export function outcomes(rng: () => number, n: number, p: number): number {
  let k = 0;
  for (let i = 0; i < n; i++) if (rng() < p) k++;
  return k;
}

/** How a run looks at its data: the sequential rule, one look at the end, or the nominal test at every look. */
export type Monitoring = 'sequential' | 'fixed' | 'naive';

export interface RunResult {
  /** The winning variant's index, or null when none won. */
  winner: number | null;
  /** Contacts per variant when the run stopped. */
  perVariant: number;
}

function grow(rng: () => number, counts: VariantCounts[], rates: readonly number[], to: number): void {
  counts.forEach((c, i) => {
    c.outcomes += outcomes(rng, to - c.exposures, rates[i]!);
    c.exposures = to;
  });
}

/**
 * One experiment with true rates `rates`, contacts added `plan.lookEvery` per variant at a time (the service's
 * cadence) up to the plan's sample. `sequential` decides at every look with the rule; `fixed` looks once, at
 * the fixed-horizon sample (`plan.fixedPerVariant`), with the whole alpha; `naive` applies that one-look test
 * at every look, which is what peeking at a plain significance test does.
 */
export function runExperiment(plan: ExperimentPlan, rates: readonly number[], rng: () => number, monitoring: Monitoring): RunResult {
  const counts = rates.map(() => ({ exposures: 0, outcomes: 0 }));
  if (monitoring === 'fixed') {
    grow(rng, counts, rates, plan.fixedPerVariant);
    return { winner: oneLook(plan, counts), perVariant: plan.fixedPerVariant };
  }
  const earlierLooks: number[] = [];
  for (let n = plan.lookEvery; ; n += plan.lookEvery) {
    const to = Math.min(n, plan.plannedPerVariant);
    grow(rng, counts, rates, to);
    if (monitoring === 'naive') {
      const winner = to >= plan.minimumPerVariant ? oneLook(plan, counts) : null;
      if (winner !== null || to >= plan.plannedPerVariant) return { winner, perVariant: to };
      continue;
    }
    const verdict = judge({ plan, counts, earlierLooks });
    if (verdict.look) earlierLooks.push(verdict.look.fraction);
    if (verdict.state !== 'collecting') return { winner: verdict.winner, perVariant: to };
  }
}

/** The winner of a single look spending the whole alpha now (a fixed-horizon test on these counts), or null. */
function oneLook(plan: ExperimentPlan, counts: readonly VariantCounts[]): number | null {
  const n = Math.min(...counts.map((c) => c.exposures));
  return judge({ plan: { ...plan, plannedPerVariant: n, minimumPerVariant: n }, counts, earlierLooks: [] }).winner;
}

export interface SimulationSummary {
  runs: number;
  /** Share of runs whose winner is the variant with the highest true rate (none when the rates are equal). */
  correct: number;
  /** Share of runs naming a winner that is not the best: any winner when all rates are equal. */
  falseWinner: number;
  /** Share of runs ending without a winner. */
  noWinner: number;
  /** Mean contacts per variant at the stop. */
  averagePerVariant: number;
}

/** `runs` experiments with true `rates` under `monitoring`, from `seed`. */
export function simulate(
  plan: ExperimentPlan,
  rates: readonly number[],
  runs: number,
  seed: number,
  monitoring: Monitoring,
): SimulationSummary {
  const rng = seededRandom(seed);
  const top = Math.max(...rates);
  const best = rates.filter((r) => r === top).length === 1 ? rates.indexOf(top) : null;
  let correct = 0;
  let falseWinner = 0;
  let noWinner = 0;
  let sample = 0;
  for (let i = 0; i < runs; i++) {
    const run = runExperiment(plan, rates, rng, monitoring);
    sample += run.perVariant;
    if (run.winner === null) noWinner++;
    else if (run.winner === best) correct++;
    else falseWinner++;
  }
  return { runs, correct: correct / runs, falseWinner: falseWinner / runs, noWinner: noWinner / runs, averagePerVariant: sample / runs };
}
