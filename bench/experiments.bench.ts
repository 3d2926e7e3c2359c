/**
 * The experiments' stopping rule, simulated: whole experiments against a stand-in audience whose true rates
 * are known (each contact answers with its variant's true rate), contacts arriving 50 per variant between
 * looks, as the service looks. For each pair of true rates: the share of runs picking the better variant,
 * the share naming a winner that is not the best (any winner when the rates are equal), and the sample used;
 * for the sequential rule, for a fixed-horizon test (one look at its own planned sample) and for a plain test
 * at every look (peeking). Seeded, so a run repeats exactly. Pure computation: no server, no database.
 * BENCH_EXPERIMENT_RUNS changes the 200 runs of the main table; BENCH_LEAK_FALSE_RUNS / BENCH_LEAK_POWER_RUNS the leaks' 5,000 and 2,000.
 * BENCH_LEAK_ONLY=text runs only the leak rows whose handling's label holds `text` (e.g. "replanned"), and no other
 * table: a re-run of the rows a change touched, whose figures are then copied into the page by hand.
 */
import { planExperiment, type ExperimentPlan } from '../src/statistics/plan.js';
import { type Leak, type LeakSummary, simulateLeak } from '../src/statistics/leaks.js';
import { type Monitoring, simulate, type SimulationSummary } from '../src/statistics/simulate.js';
import { fmt, pct } from './lib.js';
import type { BenchContext, Section } from './run.js';

const SEED = 20260101;
const LABEL: Record<Monitoring, string> = {
  sequential: 'sequential rule',
  fixed: 'fixed horizon (one look)',
  naive: 'plain test at every look',
};

function plan(variants: number, alpha?: number, power?: number): ExperimentPlan {
  return planExperiment({
    id: `bench_${variants}`,
    hypothesis: 'simulated',
    subject: 'a simulated mail subject',
    variants: ['A', 'B', 'C', 'D'].slice(0, variants).map((key) => ({ key, description: key })),
    metric: 'reply_rate',
    audience: 'a stand-in audience with known rates',
    baselineRate: 0.04,
    minimumDetectableEffect: 0.02,
    alpha,
    power,
  });
}

interface Scenario {
  name: string;
  rates: number[];
}

const PAIRS: Scenario[] = [
  { name: '4% vs 6% (the planned difference)', rates: [0.04, 0.06] },
  { name: '5% vs 5% (no difference)', rates: [0.05, 0.05] },
  { name: '4% vs 5% (half the planned difference)', rates: [0.04, 0.05] },
];
const MANY: Scenario[] = [
  { name: '3 variants: 4%, 4%, 6%', rates: [0.04, 0.04, 0.06] },
  { name: '4 variants, all 5%', rates: [0.05, 0.05, 0.05, 0.05] },
];

function row(s: Scenario, m: Monitoring, p: ExperimentPlan, r: SimulationSummary): string {
  const planned = m === 'fixed' ? p.fixedPerVariant : p.plannedPerVariant;
  return (
    `| ${s.name} | ${LABEL[m]} | ${fmt(r.runs)} | ${pct(r.correct)} | ${pct(r.falseWinner)} | ${pct(r.noWinner)} | ` +
    `${fmt(r.averagePerVariant)} | ${pct(r.averagePerVariant / planned)} |`
  );
}

const HEAD = [
  '| true rates | monitoring | runs | picks the better | false winner | no winner | average sample per variant | of its planned sample |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
];

function table(
  p: ExperimentPlan,
  scenarios: Scenario[],
  runs: number,
  monitorings: Monitoring[],
): { lines: string[]; results: Map<string, SimulationSummary> } {
  const results = new Map<string, SimulationSummary>();
  const lines = [...HEAD];
  for (const s of scenarios) {
    for (const m of monitorings) {
      const r = simulate(p, s.rates, runs, SEED, m);
      results.set(`${s.name}|${m}`, r);
      lines.push(row(s, m, p, r));
    }
  }
  return { lines, results };
}

const describe = (p: ExperimentPlan) =>
  `alpha ${p.alpha} two-sided, power ${p.power} for 4% against 6%: one look at the end needs ${fmt(p.fixedPerVariant)} per ` +
  `variant, the sequential rule plans ${fmt(p.plannedPerVariant)} and looks every ${p.lookEvery} from ${fmt(p.minimumPerVariant)}`;

/** One leak's scenario: its plan, true rates, the leak under the old handling and the new, and runs. */
interface LeakScenario {
  name: string;
  plan: ExperimentPlan;
  rates: number[];
  handling: { label: string; leak: Leak }[];
  runs: number;
}

const range = (x: [number, number]) => `${pct(x[0])}–${pct(x[1])}`;

function leakPlan(baselineRate: number, minimumDetectableEffect: number, extra: Partial<ExperimentPlan> = {}): ExperimentPlan {
  return planExperiment({
    id: 'bench_leak',
    hypothesis: 'simulated',
    subject: 'a simulated mail subject',
    variants: ['A', 'B'].map((key) => ({ key, description: key })),
    metric: 'reply_rate',
    audience: 'a stand-in audience with known rates',
    baselineRate,
    minimumDetectableEffect,
    baselineSource: { kind: 'assumed' },
    ...extra,
  });
}

/** The outside statistician's leaks, each under the old handling and the new (docs/decisions/experiments.md). */
export function leakTables(falseRuns: number, powerRuns: number): { lines: string[]; verdicts: string[] } {
  const four = leakPlan(0.04, 0.02, { effectKind: 'relative' });
  const points = leakPlan(0.04, 0.02, { effectKind: 'absolute' });
  const clusteredTruth = { rho: 0.2, perPerson: 4 };
  const ad = (clustering?: { rho: number; perPerson: number }) =>
    leakPlan(0.02, 0.01, { metric: 'click_rate', lookEvery: 500, ...(clustering ? { clustering } : {}) });
  const late = (capped: boolean): Leak => ({ lateReplies: { extra: 0.01, lateDays: 20, capped } });
  const scenarios: LeakScenario[] = [
    {
      name: "person's early stop after a 'looks good' interim view (5% vs 5%)",
      plan: four,
      rates: [0.05, 0.05],
      runs: falseRuns,
      handling: [
        { label: 'old: the ended look spends the alpha left', leak: { personStop: 'spends' } },
        { label: 'new: a stop declares no winner', leak: { personStop: 'no_winner' } },
      ],
    },
    {
      name: 'reviewer dismisses 15% of B, picking non-answerers (5% vs 5%)',
      plan: four,
      rates: [0.05, 0.05],
      runs: falseRuns,
      handling: [
        { label: 'old: no ratio check', leak: { dismissShare: 0.15 } },
        { label: 'new: ratio check (p < 0.001) pauses', leak: { dismissShare: 0.15, ratioCheck: true } },
      ],
    },
    {
      name: "faster replies in B: A's contacts also answer after the window (+1 point, mean 20 days late; 5% vs 5% within it)",
      plan: four,
      rates: [0.05, 0.05],
      runs: falseRuns,
      handling: [
        { label: 'old: every reply so far counts', leak: late(false) },
        { label: 'new: only replies within the window', leak: late(true) },
      ],
    },
    {
      name: 'ad clicks clustered by person (ρ 0.2, 4 impressions each; 2% vs 2%)',
      plan: ad(),
      rates: [0.02, 0.02],
      runs: falseRuns,
      handling: [{ label: 'old: impressions as independent', leak: { clustered: clusteredTruth } }],
    },
    {
      name: 'ad clicks clustered by person (ρ 0.2, 4 impressions each; 2% vs 2%)',
      plan: ad(clusteredTruth),
      rates: [0.02, 0.02],
      runs: falseRuns,
      handling: [{ label: 'new: design effect 1.6 (ρ 0.2, 4 per person assumed)', leak: { clustered: clusteredTruth } }],
    },
    {
      name: 'true baseline 1%, the planned lift (1% vs 1.5%); plan assumed 4% (4% vs 6%)',
      plan: four,
      rates: [0.01, 0.015],
      runs: powerRuns,
      handling: [
        { label: 'old: default plan', leak: {} },
        { label: 'new: replanned before the first look', leak: { replan: true } },
        { label: 'new: measured baseline (5,000 exposures of history)', leak: { history: 5000 } },
      ],
    },
    {
      name: 'true baseline 20%, the planned +2 points (20% vs 22%); plan assumed 4% (4% vs 6%)',
      plan: points,
      rates: [0.2, 0.22],
      runs: powerRuns,
      handling: [
        { label: 'old: default plan', leak: {} },
        { label: 'new: replanned before the first look', leak: { replan: true } },
        { label: 'new: measured baseline (5,000 exposures of history)', leak: { history: 5000 } },
      ],
    },
    {
      name: 'true baseline 1%, no difference (1% vs 1%); plan assumed 4%',
      plan: four,
      rates: [0.01, 0.01],
      runs: falseRuns,
      handling: [
        { label: 'new: replanned before the first look', leak: { replan: true } },
        { label: 'new: measured baseline (5,000 exposures of history)', leak: { history: 5000 } },
      ],
    },
  ];
  const lines = [
    '| scenario | handling | runs | picks the better (95% interval) | power promised | false winner (95% interval) | paused | ' +
      'replanned | average sample per variant |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const verdicts: string[] = [];
  const only = process.env.BENCH_LEAK_ONLY;
  for (const s of scenarios) {
    const equal = s.rates.every((r) => r === s.rates[0]);
    for (const h of s.handling.filter((x) => !only || x.label.includes(only))) {
      const r: LeakSummary = simulateLeak(s.plan, s.rates, s.runs, SEED, h.leak);
      lines.push(
        `| ${s.name} | ${h.label} | ${fmt(r.runs)} | ${equal ? '—' : `${pct(r.correct)} (${range(r.correctInterval)})`} | ` +
          `${equal ? '—' : pct(r.promised)} | ${pct(r.falseWinner)} (${range(r.falseWinnerInterval)}) | ${pct(r.paused)} | ` +
          `${pct(r.replanned)} | ${fmt(r.averagePerVariant)} |`,
      );
      if (!h.label.startsWith('new')) continue;
      if (equal)
        verdicts.push(
          `${s.name}, ${h.label}: upper 95% bound ${pct(r.falseWinnerInterval[1])} ` +
            `(${r.falseWinnerInterval[1] <= 0.05 ? 'met' : 'missed'})`,
        );
      else {
        const gap = r.correct - r.promised;
        verdicts.push(
          `${s.name}, ${h.label}: power ${pct(r.correct)} against ${pct(r.promised)} promised ` +
            `(${Math.abs(gap) <= 0.03 || gap > 0 ? 'met' : 'missed'})`,
        );
      }
    }
  }
  return { lines, verdicts };
}

export async function experimentsSimulation(_ctx: BenchContext): Promise<Section> {
  const runs = Number(process.env.BENCH_EXPERIMENT_RUNS ?? 200);
  if (process.env.BENCH_LEAK_ONLY) {
    const only = leakTables(Number(process.env.BENCH_LEAK_FALSE_RUNS ?? 5000), Number(process.env.BENCH_LEAK_POWER_RUNS ?? 2000));
    const body = [
      `Only the leak rows of "${process.env.BENCH_LEAK_ONLY}" (BENCH_LEAK_ONLY):`,
      '',
      ...only.lines,
      '',
      ...only.verdicts.map((v) => `- ${v}`),
    ];
    return { title: 'Experiments: the stopping rule simulated', body: body.join('\n') };
  }
  const all: Monitoring[] = ['sequential', 'fixed', 'naive'];
  const two = plan(2);
  const main = table(two, PAIRS, runs, all);
  const precise = table(two, PAIRS.slice(0, 2), 2000, ['sequential', 'fixed']);
  const many = table(plan(3), MANY.slice(0, 1), runs, ['sequential', 'fixed']);
  const four = table(plan(4), MANY.slice(1), runs, ['sequential', 'fixed']);
  const first = plan(2, 0.05, 0.9);
  const before = table(first, PAIRS.slice(0, 2), runs, ['sequential']);
  const beforePrecise = table(first, PAIRS.slice(0, 2), 2000, ['sequential']);
  const leakRuns = {
    falseRuns: Number(process.env.BENCH_LEAK_FALSE_RUNS ?? 5000),
    powerRuns: Number(process.env.BENCH_LEAK_POWER_RUNS ?? 2000),
  };
  const leaks = leakTables(leakRuns.falseRuns, leakRuns.powerRuns);
  const picks = main.results.get(`${PAIRS[0]!.name}|sequential`)!;
  const nullRun = main.results.get(`${PAIRS[1]!.name}|sequential`)!;
  const body = [
    `Whole experiments simulated against a stand-in audience with known true reply rates (seed ${SEED}); contacts`,
    `arrive 50 per variant between looks. The design (the defaults): ${describe(two)}.`,
    'The fixed-horizon baseline looks once, at its own planned sample; the plain test at every look is what peeking at',
    'an ordinary significance test does. "False winner": a winner that is not the best variant (any winner when equal).',
    '',
    ...main.lines,
    '',
    `Targets: at least 90% right picks with 4% vs 6% within the planned sample — ${pct(picks.correct)} ` +
      `(${picks.correct >= 0.9 ? 'met' : 'missed'}); at most 5% false winners with equal rates — ${pct(nullRun.falseWinner)} ` +
      `(${nullRun.falseWinner <= 0.05 ? 'met' : 'missed'}).`,
    '',
    'The same design over 2,000 runs each, for the rates behind the 200-run figures (a 200-run share moves by about ±3 points):',
    '',
    ...precise.lines,
    '',
    'More variants (each challenger against A at alpha / (variants − 1), planned for 4% against 6%):',
    '',
    ...many.lines,
    ...four.lines.slice(2),
    '',
    `The first design, before tuning: ${describe(first)}.`,
    '',
    ...before.lines,
    ...beforePrecise.lines.slice(2),
    '',
    "### What breaks the guarantee, and what the service does (the outside review's leaks)",
    '',
    `Each leak simulated under the old handling and the new (src/statistics/simulate.ts runWithLeak; seed ${SEED}), ` +
      `${fmt(leakRuns.falseRuns)} runs for each false-winner row and ${fmt(leakRuns.powerRuns)} for each power row, with 95% ` +
      'Wilson intervals. Targets: every no-difference row under the new handling at or below alpha (upper 95% bound at most ' +
      '5%); power within 3 points of the plan\'s promise where it promises one (above it is no miss). "Paused": the sample ' +
      'ratio check stopped the run, which then declares nothing until a person acts (counted as no winner here).',
    '',
    ...leaks.lines,
    '',
    ...leaks.verdicts.map((v) => `- ${v}`),
  ].join('\n');
  return { title: 'Experiments: the stopping rule simulated', body };
}
