/**
 * The figures in words: the citation a card makes when the rule decides, and an experiment plan described
 * for its card.
 */
import type { Difference } from './intervals.js';
import { normalQuantile } from './normal.js';
import { powerAt } from './power.js';
import { designEffectOf, type ExperimentPlan, METRICS, type Metric } from './plan.js';
import { type Decision, differencesAt, type VariantFigures } from './stopping.js';

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

const signed = (x: number, digits = 1) => `${x >= 0 ? '+' : '−'}${(Math.abs(x) * 100).toFixed(digits).replace(/\.0+$/, '')}`;
/** Rate points: +2.1 points. */
const points = (x: number) => `${signed(x)} points`;
/** A relative lift: +52%. Past ten times, "over +999%": the interval is then too wide to say more. */
const lift = (x: number) => (x > 9.99 ? 'over +999%' : `${signed(x, 0)}%`);

/**
 * One challenger's difference from the control in words: "B − A +2.1 points (+52%), 97% interval +0.3 to +3.9 points
 * (+7% to +110%)". The interval is the repeated confidence interval (intervals.ts): valid whenever the test ends.
 */
export function differenceWords(d: Difference, control: string): string {
  const [lo, hi] = d.absolute.interval;
  const abs = `${d.key} − ${control} ${points(d.absolute.estimate)}`;
  const rel = d.relative ? ` (${lift(d.relative.estimate)})` : '';
  const range = Number.isFinite(lo) && hi - lo < 2 ? `${points(lo).replace(' points', '')} to ${points(hi)}` : 'anything yet';
  const relRange =
    d.relative && Number.isFinite(d.relative.interval[1]) ? ` (${lift(d.relative.interval[0])} to ${lift(d.relative.interval[1])})` : '';
  return `${abs}${rel}, ${percent(d.level, 0)} interval ${range}${range === 'anything yet' ? '' : relRange}`;
}

/** The boundary a decision stored before it carried its differences is read at: its look's, else the one-look value. */
export function storedDifferences(plan: CitedPlan, decision: Decision): Difference[] {
  if (decision.differences) return decision.differences;
  const alpha = plan.alpha / (plan.variants.length - 1);
  const c = decision.look?.boundary ?? normalQuantile(1 - alpha / 2);
  return differencesAt(plan as ExperimentPlan, decision.variants, c);
}

function claim(plan: CitedPlan, decision: Decision): string {
  const control = decision.variants[0]!.key;
  const differences = storedDifferences(plan, decision)
    .map((d) => differenceWords(d, control))
    .join('; ');
  if (decision.state === 'winner') return `winner ${decision.winner.key}: ${differences}, valid at the look that decided`;
  if (decision.state === 'collecting')
    return `not decided: ${differences}, valid at any look; no winner can be read from it before the rule decides`;
  if (decision.state === 'stopped' && decision.stoppedBy === 'person')
    return `ended early by a person, so no winner is declared (a stop is a decision, not a look): ${differences}`;
  return `no winner: ${differences}`;
}

function sample(plannedPerVariant: number, decision: Decision): string {
  if (decision.plannedReached) return 'planned sample reached';
  const smallest = Math.min(...decision.variants.map((v) => v.exposures));
  const where = `${count(smallest)} of ${count(plannedPerVariant)} planned per variant`;
  return decision.state === 'stopped' ? `ended at ${where}` : where;
}

/** What a citation reads of the plan. */
export type CitedPlan = Pick<ExperimentPlan, 'metric' | 'plannedPerVariant' | 'alpha' | 'variants' | 'clustering'>;

/**
 * The figures a card cites, e.g. "positive replies 9/212 (4.2%) vs 21/208 (10.1%), winner B: B − A +5.9 points (+140%),
 * 97% interval +1.2 to +10.6 points (+20% to +380%), valid at the look that decided, planned sample reached". Never a
 * raw ratio alone, and never a probability of being better (docs/decisions/experiments.md, "What a card says").
 * With 3–4 variants each count carries its letter.
 */
export function citation(plan: CitedPlan, decision: Decision): string {
  const labelled = decision.variants.length > 2;
  const counts = decision.variants.map((v) => (labelled ? `${v.key} ${ratio(v)}` : ratio(v))).join(labelled ? ', ' : ' vs ');
  const clustered = plan.clustering ? ', intervals widened for impressions clustered by person' : '';
  return `${METRICS[plan.metric].outcomes} ${counts}, ${claim(plan, decision)}${clustered}, ${sample(plan.plannedPerVariant, decision)}`;
}

/** The metric's rate in words, e.g. "positive-reply rate (positive replies per contact in the experiment)". */
export function describeMetric(metric: Metric, unit = 'contact'): string {
  return `${METRICS[metric].rate} (${METRICS[metric].outcomes} per ${unit} in the experiment)`;
}

/** What a plan's words call its unit and its control: a mail experiment's contact and current default unless told. */
export interface PlanWords {
  unit: string;
  control: string;
  /** Units per variant the audience can give, when it is known and short of the plan: the card then says what power is left. */
  reachPerVariant?: number;
}

/** Where the baseline came from, in words; empty for a plain assumption. */
function baselineWords(plan: ExperimentPlan): string {
  const b = plan.baselineSource;
  const rate = METRICS[plan.metric].rate;
  if (b?.kind === 'measured')
    return (
      ` The baseline ${percent(plan.baselineRate)} is this account's own ${rate}: ` +
      `${count(b.outcomes ?? 0)} ${METRICS[plan.metric].outcomes} in ${count(b.exposures ?? 0)} before this experiment.`
    );
  if (b?.kind === 'replanned')
    return (
      ` Replanned at the first look: the control's ${rate} was ${percent(plan.baselineRate)} ` +
      `(${count(b.outcomes ?? 0)} in ${count(b.exposures ?? 0)}), far from the ${percent(b.assumedRate ?? 0)} first assumed, ` +
      `so the sample went from ${count(b.assumedPerVariant ?? 0)} to ${count(plan.plannedPerVariant)} per variant, ` +
      `sized for the chance above allowing for how rough a rate measured on ${count(b.outcomes ?? 0)} is.`
    );
  return (
    ` The baseline ${percent(plan.baselineRate)} is an assumption (this account has too little history of its ${rate}); ` +
    "the first look replans if the control's rate is far from it."
  );
}

/** The shortfall in words when the audience cannot reach the planned sample: the power it can still give. */
function reachWords(plan: ExperimentPlan, words: PlanWords): string {
  const reach = words.reachPerVariant;
  if (reach === undefined || reach >= plan.plannedPerVariant) return '';
  const left = powerAt(
    {
      baselineRate: plan.baselineRate,
      minimumDetectableEffect: plan.minimumDetectableEffect,
      alpha: plan.alpha,
      variants: plan.variants.length,
    },
    reach / designEffectOf(plan.clustering),
  );
  return (
    `\nWarning: the audience gives about ${count(reach)} ${words.unit}s per variant, ` +
    `short of the ${count(plan.plannedPerVariant)} planned, ` +
    `so the chance of finding the difference drops from ${Math.round(plan.power * 100)} to about ${Math.round(left * 100)} in 100.`
  );
}

/** The outcome window in words: an outcome counts only within it, the same for every variant. */
function windowWords(plan: ExperimentPlan): string {
  if (plan.outcomeWindowMs === undefined) return '';
  const hours = plan.outcomeWindowMs / 3_600_000;
  const span = hours >= 24 && hours % 24 === 0 ? `${hours / 24} day${hours === 24 ? '' : 's'}` : `${+hours.toFixed(2)} hours`;
  const after = plan.metric === 'reply_rate' || plan.metric === 'positive_reply_rate' ? 'mail' : 'exposure';
  return ` An outcome counts only within ${span} of its ${after}, the same for every variant.`;
}

/** An ad's clustering assumption in words: its impressions are not independent people. */
function clusterWords(plan: ExperimentPlan, words: PlanWords): string {
  const c = plan.clustering;
  if (!c) return '';
  return (
    ` The ad platform, not this service, picks which ad each ${words.unit} shows, so this test is not randomised per person: ` +
    `one person sees about ${c.perPerson} ${words.unit}s and answers alike (assumed correlation ${c.rho}), so the sample and every ` +
    `interval are widened ${designEffectOf(c).toFixed(1)} times in variance; ` +
    'the false-winner guarantee of a mail experiment holds only as far as those assumptions do.'
  );
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
    `Metric: ${describeMetric(plan.metric, words.unit)}.${windowWords(plan)}`,
    `Audience: ${plan.audience}`,
    `Planned sample: ${count(plan.plannedPerVariant)} ${words.unit}s per variant (${count(total)} in all), ` +
      `enough to find ${percent(plan.baselineRate)} against ${percent(target)} ${Math.round(plan.power * 100)} times in 100 ` +
      `(one look at the end would need ${count(plan.fixedPerVariant)}; looking as it goes costs ${extra}% more).${baselineWords(plan)}` +
      clusterWords(plan, words) +
      reachWords(plan, words),
    `Stopping rule: a look after every ${count(plan.lookEvery)} ${words.unit}s per variant ` +
      `once each has ${count(plan.minimumPerVariant)}; ` +
      `a variant wins only when its difference from ${control!.key} crosses the sequential boundary (O'Brien–Fleming-type alpha ` +
      `spending, which keeps the chance of a false winner at ${percent(plan.alpha)} however often it looks${split}). ` +
      `If none has by ${count(plan.plannedPerVariant)} per variant, no winner is declared and the experiment stops. ` +
      `Ending it early by hand (or dismissing its mail) declares no winner; figures before the end read "not decided".`,
  ].join('\n');
}
