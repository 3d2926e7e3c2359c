import { describe, expect, it } from 'vitest';
import { nextLookSample, sparedContacts, waveNeeds } from '../../src/statistics/waves.js';

// The sizes of an experiment's waves (src/statistics/waves.ts), on the default plan of 4% against 6%: 3,602 planned
// per variant, the first look at its minimum of 361, a look interval of 50.
const PLAN = { plannedPerVariant: 3_602, minimumPerVariant: 361, lookEvery: 50 };

describe('waves', () => {
  it('sizes the first wave to the minimum, each later one to at least the wave share, on the look interval, never past the plan', () => {
    expect(nextLookSample(PLAN, [], 0.05)).toBe(361);
    // 361 + 5% of 3,602 (181) = 542, rounded up to the interval.
    expect(nextLookSample(PLAN, [361 / 3_602], 0.05)).toBe(550);
    expect(nextLookSample(PLAN, [361 / 3_602, 550 / 3_602], 0.05)).toBe(750);
    // A share under the look interval: the interval.
    expect(nextLookSample(PLAN, [550 / 3_602], 0.001)).toBe(600);
    expect(nextLookSample(PLAN, [3_500 / 3_602], 0.05)).toBe(3_602);
    // A plan whose minimum is the whole plan: one wave.
    expect(nextLookSample({ plannedPerVariant: 35, minimumPerVariant: 35, lookEvery: 50 }, [], 0.05)).toBe(35);
  });

  it('drafts what each variant lacks of the look, within the pass budget', () => {
    expect(waveNeeds(361, [0, 0], 1_000)).toEqual([361, 361]);
    expect(waveNeeds(361, [361, 300], 1_000)).toEqual([0, 61]);
    expect(waveNeeds(361, [0, 0], 200)).toEqual([200, 0]);
    expect(waveNeeds(361, [400, 361], 200)).toEqual([0, 0]);
  });

  it('counts the contacts spared as the plan’s maximum less those mailed', () => {
    const plan = {
      plannedPerVariant: 3_602,
      variants: [
        { key: 'A', description: 'a' },
        { key: 'B', description: 'b' },
      ],
    };
    expect(sparedContacts(plan, 4_400)).toBe(2_804);
    expect(sparedContacts(plan, 7_300)).toBe(0);
  });
});
