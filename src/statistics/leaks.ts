/**
 * What breaks the stopping rule's guarantee, simulated (docs/decisions/experiments-guarantee.md): each run is one
 * experiment through the service's rules with one of the outside statistician's leaks switched on, under the old
 * handling (what the service did before) or the new one. Used by bench/experiments.bench.ts and the unit tests.
 */
import { wilson } from './intervals.js';
import { type Clustering, type ExperimentPlan, planExperiment, replanned, type VariantCounts } from './plan.js';
import { sampleRatioCheck } from './ratio-check.js';
import { outcomes, type RunResult, seededRandom, type SimulationSummary } from './simulate.js';
import { judge } from './stopping.js';

// the old handling (what the service did before) or the new one.

/** A normal draw (Box–Muller, one of the pair). */
function gaussian(rng: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
}

/** A Gamma(shape, 1) draw (Marsaglia & Tsang 2000; shape < 1 by the boost Gamma(a + 1)·U^(1/a)). */
function gamma(rng: () => number, shape: number): number {
  if (shape < 1) return gamma(rng, shape + 1) * (1 - rng()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (let i = 0; i < 1000; i++) {
    const x = gaussian(rng);
    const v = (1 + c * x) ** 3;
    if (v <= 0) continue;
    const u = 1 - rng();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
  return shape;
}

/** A person's own rate: Beta with mean `p` and intra-class correlation `rho` (a + b = (1 − ρ)/ρ). */
function personRate(rng: () => number, p: number, rho: number): number {
  const total = (1 - rho) / rho;
  const x = gamma(rng, p * total);
  const y = gamma(rng, (1 - p) * total);
  return x + y > 0 ? x / (x + y) : p;
}

/** P(B's rate > A's) on uniform-prior Beta posteriors, by their normal approximation (what the old card rounded to "above 0.99"). */
function probabilityBetter(a: VariantCounts, b: VariantCounts): number {
  const moments = (c: VariantCounts) => {
    const m = (1 + c.outcomes) / (2 + c.exposures);
    return { m, v: (m * (1 - m)) / (3 + c.exposures) };
  };
  const x = moments(a);
  const y = moments(b);
  const z = (y.m - x.m) / Math.sqrt(x.v + y.v);
  // normalCdf without the import cycle's cost: the card's threshold is all that is read.
  return 0.5 * (1 + erf(z / Math.SQRT2));
}

/** Abramowitz & Stegun 7.1.26 (error under 1.5e-7): enough to compare with 0.995. */
function erf(x: number): number {
  const s = Math.sign(x);
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496735) * t + 0.254829592) * t * Math.exp(-x * x);
  return s * y;
}

export interface Leak {
  /**
   * A person reads every look's interim figures and ends the experiment the first time the leader reads "probability
   * … better above 0.99" (P ≥ 0.995). `spends`: the old handling, the ended look spending all the alpha left;
   * `no_winner`: the new one, a person's stop declaring nothing.
   */
  personStop?: 'spends' | 'no_winner';
  /**
   * A reviewer dismisses this share of variant B's mail, picking contacts who would not have answered (the reviewer
   * recognises weak leads): B's rate is inflated and its count short.
   */
  dismissShare?: number;
  /** The sample ratio check at every look (a mismatch pauses the experiment: nothing declared). */
  ratioCheck?: boolean;
  /**
   * Replies after the reply window: the control's contacts answer late with this extra chance (days after the
   * window, exponential with mean `lateDays`), the challenger's never (its replies are all faster). `capped`: only
   * replies within the window count (new); otherwise every reply so far (old).
   */
  lateReplies?: { extra: number; lateDays: number; capped: boolean };
  /** Impressions clustered by person: the true correlation and impressions per person (the plan's assumption is its own). */
  clustered?: Clustering;
  /** Replan at the first look when the control's rate is far from the plan's (plan.ts replanned). */
  replan?: boolean;
  /** Plan on a history of this many exposures at the true control rate (a measured baseline) instead of the plan given. */
  history?: number;
}

export interface LeakRun extends RunResult {
  /** The sample ratio check paused it (nothing declared). */
  paused: boolean;
  /** Power promised by the plan the run ended on (after any replan). */
  promised: number;
  replanned: boolean;
}

const replans = new Map<string, ExperimentPlan | 'wait' | null>();
const measured = new Map<string, ExperimentPlan>();
const cacheKey = (p: ExperimentPlan) =>
  `${p.id}|${p.baselineRate}|${p.minimumDetectableEffect}|${p.effectKind}|${p.lookEvery}|${p.alpha}|${p.power}`;

/** The plan a measured baseline gives: `p`'s effect on the rate seen in `history` exposures at `rate`. */
function measuredPlan(p: ExperimentPlan, rng: () => number, rate: number, history: number): ExperimentPlan {
  const seen = Math.max(1, outcomes(rng, history, rate));
  const key = `${cacheKey(p)}|${seen}/${history}`;
  let plan = measured.get(key);
  if (!plan) {
    const baselineRate = seen / history;
    const lift = p.minimumDetectableEffect / p.baselineRate;
    const minimumDetectableEffect = p.effectKind === 'relative' ? baselineRate * lift : p.minimumDetectableEffect;
    plan = {
      ...planExperiment({ ...p, baselineRate, minimumDetectableEffect }),
      baselineSource: { kind: 'measured', outcomes: seen, exposures: history },
    };
    measured.set(key, plan);
  }
  return plan;
}

/** One experiment with `leak` (see Leak), true rates `rates`; a batch of `plan.lookEvery` contacts per variant per day. */
export function runWithLeak(given: ExperimentPlan, rates: readonly number[], rng: () => number, leak: Leak): LeakRun {
  let plan = leak.history ? measuredPlan(given, rng, rates[0]!, leak.history) : given;
  let replannedOnce = false;
  const counts = rates.map(() => ({ exposures: 0, outcomes: 0 }));
  const lateAt: number[] = [];
  const earlierLooks: number[] = [];
  const dismiss = leak.dismissShare ?? 0;
  // Each variant's outcomes after its n-th exposure, when looks judge prefixes (dismissals).
  const prefix = dismiss > 0 ? rates.map(() => [0]) : null;
  const end = (winner: number | null, paused = false): LeakRun => ({
    winner,
    paused,
    perVariant: Math.min(...counts.map((c) => c.exposures)),
    promised: plan.power,
    replanned: replannedOnce,
  });
  for (let day = 0; day < 100_000; day++) {
    // A batch of the plan's look interval, or what the control lacks of the next whole one (after a replan changed it).
    const batch = plan.lookEvery - (counts[0]!.exposures % plan.lookEvery);
    counts.forEach((c, i) => {
      if (leak.clustered) {
        const people = Math.max(1, Math.round(plan.lookEvery / leak.clustered.perPerson));
        for (let u = 0; u < people; u++) {
          const q = personRate(rng, rates[i]!, leak.clustered.rho);
          c.exposures += leak.clustered.perPerson;
          c.outcomes += outcomes(rng, leak.clustered.perPerson, q);
        }
        return;
      }
      for (let j = 0; j < batch; j++) {
        const answers = rng() < rates[i]!;
        // The reviewer's pick: contacts who would not answer, at the rate that removes `dismiss` of B's in all.
        if (i === 1 && dismiss > 0 && !answers && rng() < dismiss / (1 - rates[i]!)) continue;
        c.exposures++;
        if (answers) c.outcomes++;
        else if (i === 0 && leak.lateReplies && rng() < leak.lateReplies.extra / (1 - rates[i]!)) {
          lateAt.push(day + -Math.log(1 - rng()) * leak.lateReplies.lateDays);
        }
        if (prefix) prefix[i]!.push(c.outcomes);
      }
    });
    // Uncapped, a late reply counts once it has come (the look is a window after the day's batch).
    const late = leak.lateReplies && !leak.lateReplies.capped ? lateAt.filter((t) => t <= day).length : 0;
    const seen = counts.map((c, i) => (i === 0 ? { exposures: c.exposures, outcomes: c.outcomes + late } : c));
    const smallest = Math.min(...seen.map((c) => c.exposures));
    if (leak.ratioCheck && smallest >= plan.minimumPerVariant && sampleRatioCheck(seen.map((c) => c.exposures)).mismatch)
      return end(null, true);
    let waiting = false;
    for (let r = 0; leak.replan && r < 4 && earlierLooks.length === 0 && smallest >= plan.minimumPerVariant; r++) {
      const key = `${cacheKey(plan)}|${plan.baselineSource?.replans ?? 0}|${seen[0]!.outcomes}/${seen[0]!.exposures}`;
      if (!replans.has(key)) replans.set(key, replanned(plan, seen[0]!));
      const next = replans.get(key);
      if (!next) break;
      if (next === 'wait') {
        waiting = true;
        break;
      }
      plan = next;
      replannedOnce = true;
    }
    if (waiting) continue;
    // With B short (dismissals), each look judges the first k·lookEvery exposures of every variant, k the most the
    // smallest has: the look fractions then fall on the plan's grid and share its boundaries (as the service's do when
    // every variant grows alike); the ratio check above reads every exposure.
    const judged = prefix ? trimmed(prefix, seen, plan.lookEvery) : seen;
    const verdict = judge({ plan, counts: judged, earlierLooks });
    if (leak.personStop && verdict.state === 'collecting' && verdict.look) {
      const best = Math.max(probabilityBetter(seen[0]!, seen[1]!), probabilityBetter(seen[1]!, seen[0]!));
      if (best >= 0.995) {
        if (leak.personStop === 'no_winner') return end(judge({ plan, counts: judged, earlierLooks, stoppedByPerson: true }).winner);
        return end(judge({ plan, counts: judged, earlierLooks, ended: true }).winner);
      }
    }
    if (verdict.look && verdict.look.fraction > (earlierLooks.at(-1) ?? 0)) earlierLooks.push(verdict.look.fraction);
    if (verdict.state !== 'collecting') return end(verdict.winner);
  }
  return end(null);
}

/** Every variant cut to its first k·step exposures, k·step the most the smallest variant has. */
function trimmed(prefix: number[][], seen: VariantCounts[], step: number): VariantCounts[] {
  const n = Math.floor(Math.min(...seen.map((c) => c.exposures)) / step) * step;
  return seen.map((_, i) => ({ exposures: n, outcomes: prefix[i]![n]! }));
}

export interface LeakSummary extends SimulationSummary {
  /** 95% Wilson intervals of the shares. */
  correctInterval: [number, number];
  falseWinnerInterval: [number, number];
  paused: number;
  /** Mean power the plans promised (after any replan). */
  promised: number;
  replanned: number;
}

/** `runs` experiments with `leak` and true `rates`, from `seed`, with 95% intervals on the shares. */
export function simulateLeak(plan: ExperimentPlan, rates: readonly number[], runs: number, seed: number, leak: Leak): LeakSummary {
  const rng = seededRandom(seed);
  const top = Math.max(...rates);
  const best = rates.filter((r) => r === top).length === 1 ? rates.indexOf(top) : null;
  let correct = 0;
  let falseWinner = 0;
  let noWinner = 0;
  let paused = 0;
  let sample = 0;
  let promised = 0;
  let replannedRuns = 0;
  for (let i = 0; i < runs; i++) {
    const run = runWithLeak(plan, rates, rng, leak);
    sample += run.perVariant;
    promised += run.promised;
    if (run.replanned) replannedRuns++;
    if (run.paused) paused++;
    if (run.winner === null) noWinner++;
    else if (run.winner === best) correct++;
    else falseWinner++;
  }
  return {
    runs,
    correct: correct / runs,
    falseWinner: falseWinner / runs,
    noWinner: noWinner / runs,
    averagePerVariant: sample / runs,
    correctInterval: wilson(correct, runs),
    falseWinnerInterval: wilson(falseWinner, runs),
    paused: paused / runs,
    promised: promised / runs,
    replanned: replannedRuns / runs,
  };
}
