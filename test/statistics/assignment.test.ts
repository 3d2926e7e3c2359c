import { describe, expect, it } from 'vitest';
import { assignVariant, normaliseContact } from '../../src/statistics/assignment.js';

const CONTACTS = 100_000;
const contact = (i: number) => `person${i}@example${i % 97}.test`;

/** Pearson's chi-square of observed counts against equal expected counts. */
function chiSquareUniform(counts: readonly number[]): number {
  const expected = counts.reduce((s, c) => s + c, 0) / counts.length;
  return counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
}

// Upper 0.1% points of chi-square (any statistics table): a fair split fails these one time in a thousand.
const CHI2_999 = { 1: 10.828, 2: 13.816, 3: 16.266, 9: 27.877 } as const;

describe('variant assignment', () => {
  it('gives a contact the same variant on every call, whatever the case and spacing of its address', () => {
    const first = assignVariant('exp_subject_1', 'Jane.Doe@Acme.test', 2);
    for (let i = 0; i < 5; i++) expect(assignVariant('exp_subject_1', 'Jane.Doe@Acme.test', 2)).toBe(first);
    expect(assignVariant('exp_subject_1', '  jane.doe@acme.TEST ', 2)).toBe(first);
    expect(normaliseContact(' Jane.Doe@Acme.test\n')).toBe('jane.doe@acme.test');
  });

  it('pins the hash, so a deploy never moves a contact: SHA-256 of experiment, NUL, address, first 48 bits', () => {
    // Worked out apart from this code (Python's hashlib): SHA-256("exp_1\0a@x.test") starts 0x0425113480a5,
    // "…c@x.test" 0x51f42fadc75a, "…e@x.test" 0xa1c92f2e65cf; times 4 variants over 2^48 gives 0, 1 and 2.
    const got = ['a', 'b', 'c', 'd', 'e', 'f'].map((c) => assignVariant('exp_1', `${c}@x.test`, 4));
    expect(got).toEqual([0, 0, 1, 0, 2, 0]);
  });

  it.each([2, 3, 4])('splits 100,000 contacts evenly among %i variants (chi-square)', (variants) => {
    const counts = new Array<number>(variants).fill(0);
    for (let i = 0; i < CONTACTS; i++) counts[assignVariant('exp_uniform', contact(i), variants)]!++;
    expect(chiSquareUniform(counts)).toBeLessThan(CHI2_999[(variants - 1) as 1 | 2 | 3]);
    for (const c of counts) expect(Math.abs(c / CONTACTS - 1 / variants)).toBeLessThan(0.01);
  });

  it("assigns independently across experiments: one experiment's variant says nothing of another's", () => {
    const table = Array.from({ length: 4 }, () => new Array<number>(4).fill(0));
    for (let i = 0; i < CONTACTS; i++) table[assignVariant('exp_one', contact(i), 4)]![assignVariant('exp_two', contact(i), 4)]!++;
    const rows = table.map((r) => r.reduce((s, c) => s + c, 0));
    const cols = [0, 1, 2, 3].map((j) => table.reduce((s, r) => s + r[j]!, 0));
    let chi2 = 0;
    for (const [i, r] of table.entries()) {
      for (const [j, o] of r.entries()) chi2 += (o - (rows[i]! * cols[j]!) / CONTACTS) ** 2 / ((rows[i]! * cols[j]!) / CONTACTS);
    }
    expect(chi2).toBeLessThan(CHI2_999[9]);
  });

  it('refuses fewer than 2 or more than 4 variants', () => {
    expect(() => assignVariant('e', 'a@x.test', 1)).toThrow(RangeError);
    expect(() => assignVariant('e', 'a@x.test', 5)).toThrow(RangeError);
  });
});
