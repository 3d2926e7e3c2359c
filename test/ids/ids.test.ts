import { describe, expect, it } from 'vitest';
import { newId, randomBase62 } from '../../src/ids.js';

describe('ids', () => {
  it('hands out distinct, well-formed ids across many refills of the random pool', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('dlv'));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^dlv_[0-9A-Za-z]{20}$/);
  });

  it('draws every base62 character about equally often (no modulo bias, no repeated bytes)', () => {
    const counts = new Map<string, number>();
    const text = Array.from({ length: 5_000 }, () => randomBase62(62)).join('');
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 310,000 draws: each character's expected count is 5,000; a fair source stays far inside ±10%.
    for (const n of counts.values()) expect(Math.abs(n - 5_000)).toBeLessThan(500);
  });
});
