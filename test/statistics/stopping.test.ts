import { describe, expect, it } from 'vitest';
import { type ExperimentPlan, planExperiment } from '../../src/statistics/plan.js';
import { simulate } from '../../src/statistics/simulate.js';
import { decide, judge } from '../../src/statistics/stopping.js';

const variants = (n: number) => ['A', 'B', 'C', 'D'].slice(0, n).map((key) => ({ key, description: `version ${key}` }));
const planFor = (n = 2): ExperimentPlan =>
  planExperiment({
    id: `exp_${n}`,
    hypothesis: 'A question as the subject gets more replies.',
    subject: 'the mail subject',
    variants: variants(n),
    metric: 'reply_rate',
    audience: 'New leads.',
    baselineRate: 0.04,
    minimumDetectableEffect: 0.02,
  });
const TWO = planFor(2);
// Thousands of simulated experiments (or a plan's numerical integration) take seconds, more on a loaded machine.
const SIMULATION_MS = 120_000;

describe('the stopping rule', () => {
  it('plans 4% vs 6% at the design defaults: alpha 0.03, power 0.95, a look every 50 from a tenth of the plan', () => {
    expect(TWO).toMatchObject({ alpha: 0.03, power: 0.95, lookEvery: 50, fixedPerVariant: 3454 });
    expect(TWO.plannedPerVariant).toBeGreaterThan(3454);
    expect(TWO.minimumPerVariant).toBe(Math.ceil(TWO.plannedPerVariant / 10));
  });

  it('never declares a winner below the minimum sample, however lopsided the counts', () => {
    const under = TWO.minimumPerVariant - 1;
    const d = decide({
      plan: TWO,
      counts: [
        { exposures: under, outcomes: 0 },
        { exposures: under, outcomes: under },
      ],
      earlierLooks: [],
    });
    expect(d.state).toBe('collecting');
    expect(d.look).toBeNull();
    const ended = decide({
      plan: TWO,
      counts: [
        { exposures: under, outcomes: 0 },
        { exposures: 5000, outcomes: 5000 },
      ],
      earlierLooks: [],
      ended: true,
    });
    expect(ended.state).toBe('stopped');
    expect(ended.look).toBeNull();
  });

  it('asks for more at an early look than a plain test would: 2.3 sigma is not enough at a tenth of the plan', () => {
    const n = TWO.minimumPerVariant;
    const d = decide({
      plan: TWO,
      counts: [
        { exposures: n, outcomes: 10 },
        { exposures: n, outcomes: 22 },
      ],
      earlierLooks: [],
    });
    expect(d.variants[1]!.z).toBeGreaterThan(2.1);
    expect(d.state).toBe('collecting');
    expect(d.look!.boundary).toBeGreaterThan(5);
  });

  it('names the better variant at the planned sample, and says nothing wins when the difference is noise', () => {
    const n = TWO.plannedPerVariant;
    const clear = decide({
      plan: TWO,
      counts: [
        { exposures: n, outcomes: 140 },
        { exposures: n, outcomes: 220 },
      ],
      earlierLooks: [0.5],
    });
    expect(clear.state).toBe('winner');
    expect(clear.state === 'winner' && clear.winner).toMatchObject({ key: 'B', index: 1 });
    expect(clear.plannedReached).toBe(true);
    const noise = decide({
      plan: TWO,
      counts: [
        { exposures: n, outcomes: 170 },
        { exposures: n, outcomes: 180 },
      ],
      earlierLooks: [0.5],
    });
    expect(noise.state).toBe('no_difference');
    const control = decide({
      plan: TWO,
      counts: [
        { exposures: n, outcomes: 220 },
        { exposures: n, outcomes: 140 },
      ],
      earlierLooks: [0.5],
    });
    expect(control.state === 'winner' && control.winner.key).toBe('A');
  });

  it('gives the same decision for the same counts and looks', () => {
    const input = {
      plan: TWO,
      counts: [
        { exposures: 900, outcomes: 30 },
        { exposures: 910, outcomes: 52 },
      ],
      earlierLooks: [0.1, 0.2],
    };
    expect(decide(input)).toEqual(decide(input));
  });

  it('with three variants names a challenger only when it beats the control past the Bonferroni boundary', {
    timeout: SIMULATION_MS,
  }, () => {
    const three = planFor(3);
    const n = three.plannedPerVariant;
    const counts = [
      { exposures: n, outcomes: Math.round(n * 0.04) },
      { exposures: n, outcomes: Math.round(n * 0.041) },
      { exposures: n, outcomes: Math.round(n * 0.065) },
    ];
    const d = decide({ plan: three, counts, earlierLooks: [] });
    expect(d.state === 'winner' && d.winner.key).toBe('C');
    expect(d.look!.boundary).toBeCloseTo(2.432, 3); // z_{1 − 0.015/2}: each of the 2 comparisons gets 0.03 / 2, two-sided
  });

  it('keeps false winners at most 5% over 2,000 experiments with equal rates looked at every 50 contacts per variant', {
    timeout: SIMULATION_MS,
  }, () => {
    const summary = simulate(TWO, [0.05, 0.05], 2000, 20260101, 'sequential');
    expect(summary.falseWinner).toBeLessThanOrEqual(0.05);
    expect(summary.noWinner).toBe(1 - summary.falseWinner);
    // The same looks with a plain test at each, for contrast: peeking inflates false winners several times over.
    expect(simulate(TWO, [0.05, 0.05], 500, 20260101, 'naive').falseWinner).toBeGreaterThan(0.1);
  });

  it('keeps false winners at most 5% with four equal variants (500 experiments)', { timeout: SIMULATION_MS }, () => {
    const four = planFor(4);
    expect(simulate(four, [0.05, 0.05, 0.05, 0.05], 500, 7, 'sequential').falseWinner).toBeLessThanOrEqual(0.05);
  });

  it('picks the better of 4% and 6% in at least 90% of 500 experiments, within the planned sample', { timeout: SIMULATION_MS }, () => {
    const summary = simulate(TWO, [0.04, 0.06], 500, 11, 'sequential');
    expect(summary.correct).toBeGreaterThanOrEqual(0.9);
    expect(summary.averagePerVariant).toBeLessThan(TWO.plannedPerVariant);
  });

  it('judges as decide does, without the card figures', () => {
    const input = {
      plan: TWO,
      counts: [
        { exposures: 2000, outcomes: 60 },
        { exposures: 2000, outcomes: 120 },
      ],
      earlierLooks: [0.2, 0.4],
    };
    const verdict = judge(input);
    const decision = decide(input);
    expect(verdict.state).toBe(decision.state);
    expect(verdict.look).toEqual(decision.look);
  });
});
