import { describe, expect, it } from 'vitest';
import { normalCdf, normalQuantile, normalSf } from '../../src/statistics/normal.js';

// Reference values: R's pnorm/qnorm (the same in SciPy's norm.cdf/ppf), to the digits shown.
describe('the normal distribution', () => {
  it('gives Φ and its upper tail to double precision in the body and 1e-8 relative far out', () => {
    expect(normalCdf(0)).toBe(0.5);
    expect(normalCdf(1)).toBeCloseTo(0.8413447460685429, 14);
    expect(normalCdf(-1.96)).toBeCloseTo(0.024997895148220435, 15);
    expect(normalSf(2.5)).toBeCloseTo(0.006209665325776132, 15);
    expect(normalSf(6) / 9.865876450376946e-10).toBeCloseTo(1, 8);
    expect(normalSf(10) / 7.61985302416047e-24).toBeCloseTo(1, 7);
    expect(normalCdf(-8) / 6.22096057427174e-16).toBeCloseTo(1, 7);
  });

  it('inverts Φ (Acklam with a Halley step) to 1e-12 from the far tails to the centre', () => {
    const table: [number, number][] = [
      [0.975, 1.959963984540054],
      [0.9, 1.2815515655446004],
      [0.8, 0.8416212335729143],
      [0.0125, -2.241402727604945],
      [1e-4, -3.7190164854556804],
      [1e-10, -6.361340902404056],
    ];
    for (const [p, x] of table) expect(normalQuantile(p)).toBeCloseTo(x, 8);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    for (const p of [0.001, 0.02425, 0.3, 0.7, 0.97575, 0.999]) expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 12);
  });

  it('refuses a probability outside (0, 1)', () => {
    expect(() => normalQuantile(0)).toThrow(RangeError);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });
});
