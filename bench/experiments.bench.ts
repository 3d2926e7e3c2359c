/**
 * The experiments' stopping rule, simulated: whole experiments against a stand-in audience whose true rates
 * are known (each contact answers with its variant's true rate), contacts arriving 50 per variant between
 * looks, as the service looks. For each pair of true rates: the share of runs picking the better variant,
 * the share naming a winner that is not the best (any winner when the rates are equal), and the sample used;
 * for the sequential rule, for a fixed-horizon test (one look at its own planned sample) and for a plain test
 * at every look (peeking). Seeded, so a run repeats exactly. Pure computation: no server, no database.
 * BENCH_EXPERIMENT_RUNS changes the 200 runs of the main table.
 */
import { planExperiment, type ExperimentPlan } from '../src/statistics/plan.js';
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

export async function experimentsSimulation(_ctx: BenchContext): Promise<Section> {
  const runs = Number(process.env.BENCH_EXPERIMENT_RUNS ?? 200);
  const all: Monitoring[] = ['sequential', 'fixed', 'naive'];
  const two = plan(2);
  const main = table(two, PAIRS, runs, all);
  const precise = table(two, PAIRS.slice(0, 2), 2000, ['sequential', 'fixed']);
  const many = table(plan(3), MANY.slice(0, 1), runs, ['sequential', 'fixed']);
  const four = table(plan(4), MANY.slice(1), runs, ['sequential', 'fixed']);
  const first = plan(2, 0.05, 0.9);
  const before = table(first, PAIRS.slice(0, 2), runs, ['sequential']);
  const beforePrecise = table(first, PAIRS.slice(0, 2), 2000, ['sequential']);
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
  ].join('\n');
  return { title: 'Experiments: the stopping rule simulated', body };
}
