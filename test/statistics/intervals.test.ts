import { describe, expect, it } from 'vitest';
import { wilson } from '../../src/statistics/intervals.js';
import { citation, describePlan, formatProbability } from '../../src/statistics/wording.js';
import { planExperiment } from '../../src/statistics/plan.js';
import { probabilityBest } from '../../src/statistics/posterior.js';
import { seededRandom } from '../../src/statistics/simulate.js';
import { decide } from '../../src/statistics/stopping.js';

describe('the Wilson interval', () => {
  it('matches Newcombe (Statistics in Medicine 1998, Table II, the score method without correction)', () => {
    const cases: [number, number, number, number][] = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [k, n, lo, hi] of cases) {
      const [a, b] = wilson(k, n);
      expect(a).toBeCloseTo(lo, 4);
      expect(b).toBeCloseTo(hi, 4);
    }
    expect(wilson(0, 0)).toEqual([0, 1]);
  });

  it('covers the true rate about 95% of the time (simulated, rates and samples as experiments see them)', () => {
    const rng = seededRandom(3);
    for (const [p, n] of [
      [0.04, 200],
      [0.05, 1000],
      [0.1, 300],
      [0.3, 100],
    ] as const) {
      let covered = 0;
      const runs = 4000;
      for (let r = 0; r < runs; r++) {
        let k = 0;
        for (let i = 0; i < n; i++) if (rng() < p) k++;
        const [lo, hi] = wilson(k, n);
        if (lo <= p && p <= hi) covered++;
      }
      expect(covered / runs).toBeGreaterThan(0.93);
      expect(covered / runs).toBeLessThan(0.975);
    }
  });
});

describe('the probability each variant is best', () => {
  it('matches numerical integration of the Beta posteriors (SciPy quad)', () => {
    const [a, b] = probabilityBest([
      { exposures: 212, outcomes: 9 },
      { exposures: 208, outcomes: 21 },
    ]);
    expect(b).toBeCloseTo(0.98970504, 5);
    expect(a! + b!).toBeCloseTo(1, 12);
    const three = probabilityBest([
      { exposures: 1000, outcomes: 50 },
      { exposures: 1000, outcomes: 60 },
      { exposures: 1000, outcomes: 55 },
    ]);
    for (const [i, p] of [0.10164097, 0.61999314, 0.27836589].entries()) expect(three[i]).toBeCloseTo(p, 4);
  });

  it('is even when nothing is known yet', () => {
    for (const p of probabilityBest([
      { exposures: 0, outcomes: 0 },
      { exposures: 0, outcomes: 0 },
    ]))
      expect(p).toBeCloseTo(0.5, 6);
  });
});

const plan = planExperiment({
  id: 'exp_subject',
  hypothesis: 'A question as the subject gets more positive replies than a statement.',
  subject: 'the mail subject',
  variants: [
    { key: 'A', description: '"Quick idea for Acme"' },
    { key: 'B', description: '"Can I ask you something?"' },
  ],
  metric: 'positive_reply_rate',
  audience: 'New leads of SaaS companies with 10–50 staff.',
  baselineRate: 0.04,
  minimumDetectableEffect: 0.02,
});

describe('the card in plain words', () => {
  it("cites the issue's example figures with the difference and its interval, never a probability", () => {
    const small = { ...plan, plannedPerVariant: 200, minimumPerVariant: 100 };
    const d = decide({
      plan: small,
      counts: [
        { exposures: 212, outcomes: 9 },
        { exposures: 208, outcomes: 21 },
      ],
      earlierLooks: [],
    });
    expect(d.state).toBe('winner');
    expect(citation(small, d)).toMatch(
      /^positive replies 9\/212 \(4\.2%\) vs 21\/208 \(10\.1%\), winner B: B − A \+5\.9 points \(\+138%\), 97% interval \+[\d.]+ /,
    );
    expect(citation(small, d)).toMatch(/to \+[\d.]+ points \(\+\d+% to \+\d+%\), valid at the look that decided, planned sample reached$/);
  });

  it('says when nothing won, and where a running experiment stands', () => {
    const n = plan.plannedPerVariant;
    const none = decide({
      plan,
      counts: [
        { exposures: n, outcomes: 150 },
        { exposures: n + 3, outcomes: 160 },
      ],
      earlierLooks: [],
    });
    expect(citation(plan, none)).toMatch(
      new RegExp(
        '^positive replies 150/3,\\d{3} \\(4\\.\\d%\\) vs 160/3,\\d{3} \\(4\\.\\d%\\), ' +
          'no winner: B − A \\+0\\.\\d points \\(\\+\\d+%\\), 97% interval −[\\d.]+ to \\+[\\d.]+ points .*, planned sample reached$',
      ),
    );
    const running = decide({
      plan,
      counts: [
        { exposures: 1200, outcomes: 50 },
        { exposures: 1210, outcomes: 60 },
      ],
      earlierLooks: [],
    });
    const said = citation(plan, running);
    expect(said).toMatch(
      /^positive replies 50\/1,200 \(4\.2%\) vs 60\/1,210 \(5%\), not decided: B − A \+0\.8 points \(\+19%\), 97% interval /,
    );
    expect(said).toContain(
      `valid at any look; no winner can be read from it before the rule decides, 1,200 of ${n.toLocaleString('en-US')} planned per variant`,
    );
    expect(said).not.toMatch(/probability/);
  });

  it('never rounds a probability up to certainty', () => {
    expect(formatProbability(0.9989)).toBe('above 0.99');
    expect(formatProbability(0.0001)).toBe('below 0.01');
    expect(formatProbability(0.9897)).toBe('0.99');
  });

  it('describes the plan: hypothesis, variants, metric, audience, planned sample and stopping rule', () => {
    const text = describePlan(plan);
    const n = plan.plannedPerVariant.toLocaleString('en-US');
    expect(text.split('\n')).toEqual([
      'Hypothesis: A question as the subject gets more positive replies than a statement.',
      'Variants of the mail subject: A: "Quick idea for Acme" (the current default); B: "Can I ask you something?".',
      'Metric: positive-reply rate (positive replies per contact in the experiment).',
      'Audience: New leads of SaaS companies with 10–50 staff.',
      expect.stringMatching(
        new RegExp(
          `^Planned sample: ${n} contacts per variant .*enough to find 4% against 6% 95 times in 100 ` +
            '\\(one look at the end would need 3,454',
        ),
      ),
      expect.stringMatching(
        /^Stopping rule: a look after every 50 contacts per variant once each has .*false winner at 3% however often it looks\)\./,
      ),
    ]);
  });
});
