import { describe, expect, it } from 'vitest';
import { fixedSamplePerVariant, lookFractions, sequentialSamplePerVariant } from '../../src/statistics/power.js';
import { inflationFactor, obfSpent, spendingBoundaries } from '../../src/statistics/sequential.js';

describe('the planned sample', () => {
  it('matches the pooled-variance formula (Fleiss, Levin & Paik, no continuity correction): 4% vs 6%', () => {
    // [1.95996·√(2·0.05·0.95) + 0.84162·√(0.04·0.96 + 0.06·0.94)]² / 0.02² = 1,862.93 → 1,863 per arm.
    expect(fixedSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0.02, alpha: 0.05, power: 0.8 })).toBe(1863);
    expect(fixedSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0.02, alpha: 0.05, power: 0.9 })).toBe(2494);
    // The same difference the other way round needs the same sample.
    expect(fixedSamplePerVariant({ baselineRate: 0.06, minimumDetectableEffect: -0.02, alpha: 0.05, power: 0.8 })).toBe(1863);
  });

  it('divides alpha among the comparisons with the control when there are 3 or 4 variants (Bonferroni)', () => {
    const two = fixedSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0.02, alpha: 0.05, power: 0.8, variants: 2 });
    const four = fixedSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0.02, alpha: 0.05, power: 0.8, variants: 4 });
    expect(four).toBe(fixedSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0.02, alpha: 0.05 / 3, power: 0.8 }));
    expect(four).toBeGreaterThan(two);
  });

  it('refuses rates outside (0, 1) or no difference', () => {
    expect(() => fixedSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0, alpha: 0.05, power: 0.8 })).toThrow(RangeError);
    expect(() => fixedSamplePerVariant({ baselineRate: 0.99, minimumDetectableEffect: 0.02, alpha: 0.05, power: 0.8 })).toThrow(RangeError);
  });

  it('plans a little more for the sequential rule than for one look, and looks every 50 from the minimum', () => {
    const s = sequentialSamplePerVariant({ baselineRate: 0.04, minimumDetectableEffect: 0.02, alpha: 0.05, power: 0.9 }, 50, 0.1, 100);
    expect(s.fixed).toBe(2494);
    expect(s.inflation).toBeGreaterThan(1.02);
    expect(s.inflation).toBeLessThan(1.08);
    expect(s.planned).toBe(Math.ceil(2494 * s.inflation));
    const looks = lookFractions(s.planned, 50, 262);
    expect(looks[0]).toBeCloseTo(300 / s.planned, 12);
    expect(looks.at(-1)).toBe(1);
    expect(looks).toHaveLength(s.looks);
  });
});

describe('the sequential boundaries (Lan–DeMets, O’Brien–Fleming-type spending)', () => {
  it('reproduces the published boundaries for 5 equally spaced looks, two-sided alpha 0.05', () => {
    // Jennison & Turnbull (2000), and R's gsDesign/ldbounds: 4.877, 3.357, 2.680, 2.290, 2.031.
    const { z, spent } = spendingBoundaries([0.2, 0.4, 0.6, 0.8, 1], 0.05);
    for (const [k, c] of [4.877, 3.357, 2.68, 2.29, 2.031].entries()) expect(z[k]).toBeCloseTo(c, 3);
    expect(spent.at(-1)).toBe(0.05);
    // 4·(1 − Φ(2.2414 / √0.5)): half the information spends 0.00305 of the 0.05.
    expect(obfSpent(0.5, 0.05)).toBeCloseTo(0.0030506, 6);
  });

  it('is the plain two-sided test for a single look at the end', () => {
    expect(spendingBoundaries([1], 0.05).z[0]).toBeCloseTo(1.959964, 5);
  });

  it('spends all the alpha left at a last look that falls short of the plan (the audience ran out)', () => {
    const short = spendingBoundaries([0.2, 0.4, 0.6], 0.05, true);
    expect(short.spent.at(-1)).toBe(0.05);
    expect(short.z[2]).toBeLessThan(spendingBoundaries([0.2, 0.4, 0.6], 0.05).z[2]!);
    expect(short.z[2]).toBeGreaterThan(1.96);
  });

  it('costs about 2% more sample for 5 looks at power 0.9, more for more looks', () => {
    const five = inflationFactor([0.2, 0.4, 0.6, 0.8, 1], 0.05, 0.9);
    expect(five).toBeGreaterThan(1.015);
    expect(five).toBeLessThan(1.035);
    const twenty = inflationFactor(
      Array.from({ length: 20 }, (_, i) => (i + 1) / 20),
      0.05,
      0.9,
    );
    expect(twenty).toBeGreaterThan(five);
  });

  it('refuses looks that do not move forward', () => {
    expect(() => spendingBoundaries([0.5, 0.5], 0.05)).toThrow(RangeError);
  });
});
