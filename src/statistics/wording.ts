/**
 * The figures in words: the citation a card makes when the rule decides, and an experiment plan described
 * for its card.
 */
import { type ExperimentPlan, METRICS, type Metric } from './plan.js';
import type { Decision, VariantFigures } from './stopping.js';

const count = (n: number): string => n.toLocaleString('en-US');
const percent = (x: number, digits = 1): string => `${(x * 100).toFixed(digits).replace(/\.0+$/, '')}%`;

/** A probability to two decimals, never rounded up to a certainty it is not. */
export function formatProbability(p: number): string {
  if (p >= 0.995) return 'above 0.99';
  if (p < 0.005) return 'below 0.01';
  return p.toFixed(2);
}

function ratio(v: VariantFigures): string {
  return `${count(v.outcomes)}/${count(v.exposures)} (${v.exposures > 0 ? percent(v.outcomes / v.exposures) : 'none yet'})`;
}

function claim(decision: Decision): string {
  const two = decision.variants.length === 2;
  const said = (v: VariantFigures) => `probability ${v.key} is ${two ? 'better' : 'best'} ${formatProbability(v.probabilityBest)}`;
  if (decision.state === 'winner') return said(decision.variants[decision.winner.index]!);
  const leader = decision.variants.reduce((a, b) => (b.probabilityBest > a.probabilityBest ? b : a));
  if (decision.state === 'collecting') return `${said(leader)}, not yet decided`;
  return `no winner (${said(leader)})`;
}

function sample(plannedPerVariant: number, decision: Decision): string {
  if (decision.plannedReached) return 'planned sample reached';
  const smallest = Math.min(...decision.variants.map((v) => v.exposures));
  const where = `${count(smallest)} of ${count(plannedPerVariant)} planned per variant`;
  return decision.state === 'stopped' ? `ended at ${where}` : where;
}

/**
 * The figures a card cites, e.g. "positive replies 9/212 (4.2%) vs 21/208 (10.1%), probability B is better
 * 0.99, planned sample reached". With 3–4 variants each count carries its letter and the probability is of
 * being best.
 */
export function citation(plan: Pick<ExperimentPlan, 'metric' | 'plannedPerVariant'>, decision: Decision): string {
  const labelled = decision.variants.length > 2;
  const counts = decision.variants.map((v) => (labelled ? `${v.key} ${ratio(v)}` : ratio(v))).join(labelled ? ', ' : ' vs ');
  return `${METRICS[plan.metric].outcomes} ${counts}, ${claim(decision)}, ${sample(plan.plannedPerVariant, decision)}`;
}

/** The metric's rate in words, e.g. "positive-reply rate (positive replies per contact in the experiment)". */
export function describeMetric(metric: Metric, unit = 'contact'): string {
  return `${METRICS[metric].rate} (${METRICS[metric].outcomes} per ${unit} in the experiment)`;
}

/** What a plan's words call its unit and its control: a mail experiment's contact and current default unless told. */
export interface PlanWords {
  unit: string;
  control: string;
}

/** The plan in plain words for the experiment's card: one line each for hypothesis, variants, metric, audience, sample and rule. */
export function describePlan(plan: ExperimentPlan, words: PlanWords = { unit: 'contact', control: 'the current default' }): string {
  const [control, ...challengers] = plan.variants;
  const comparisons = challengers.length;
  const target = plan.baselineRate + plan.minimumDetectableEffect;
  const extra = Math.round((plan.plannedPerVariant / plan.fixedPerVariant - 1) * 100);
  const total = plan.plannedPerVariant * plan.variants.length;
  const split = comparisons > 1 ? `, split evenly among the ${comparisons} comparisons with ${control!.key}` : '';
  return [
    `Hypothesis: ${plan.hypothesis}`,
    `Variants of ${plan.subject}: ${control!.key}: ${control!.description} (${words.control}); ${challengers
      .map((v) => `${v.key}: ${v.description}`)
      .join('; ')}.`,
    `Metric: ${describeMetric(plan.metric, words.unit)}.`,
    `Audience: ${plan.audience}`,
    `Planned sample: ${count(plan.plannedPerVariant)} ${words.unit}s per variant (${count(total)} in all), ` +
      `enough to find ${percent(plan.baselineRate)} against ${percent(target)} ${Math.round(plan.power * 100)} times in 100 ` +
      `(one look at the end would need ${count(plan.fixedPerVariant)}; looking as it goes costs ${extra}% more).`,
    `Stopping rule: a look after every ${count(plan.lookEvery)} ${words.unit}s per variant ` +
      `once each has ${count(plan.minimumPerVariant)}; ` +
      `a variant wins only when its difference from ${control!.key} crosses the sequential boundary (O'Brien–Fleming-type alpha ` +
      `spending, which keeps the chance of a false winner at ${percent(plan.alpha)} however often it looks${split}). ` +
      `If none has by ${count(plan.plannedPerVariant)} per variant, no winner is declared and the experiment stops.`,
  ].join('\n');
}
