import { describe, expect, it } from 'vitest';
import { prng } from '../../src/leads/seed.js';
import { MINUTE_BUCKET_MS, ROLLUP_BUCKET_MS, splitWindow, type Span, type WindowSplit } from '../../src/results/rollup-window.js';

const HOUR = ROLLUP_BUCKET_MS;
const MINUTE = MINUTE_BUCKET_MS;
const T0 = 1_800_000_000_000;

/** Every span of the split, with its kind, in time order. */
const all = (s: WindowSplit) =>
  [
    ...s.rolled.map((x) => ({ ...x, kind: 'rolled' })),
    ...s.minutes.map((x) => ({ ...x, kind: 'minutes' })),
    ...s.raw.map((x) => ({ ...x, kind: 'raw' })),
  ].sort((a, b) => a.lo - b.lo);

const crosses = (s: Span, t: number) => s.lo < t && t < s.hi;
const length = (spans: Span[]) => spans.reduce((n, s) => n + s.hi - s.lo, 0);

/** The rules of a split of [from, until] at since with minutes complete from minutesFrom. */
function expectSound(from: number, since: number, until: number, minutesFrom: number) {
  const split = splitWindow(from, since, until, true, minutesFrom);
  const spans = all(split);
  const label = JSON.stringify({ from, since, until, minutesFrom, split });
  // [from, until] exactly once: non-empty spans, each starting where the one before ended.
  expect(spans[0]?.lo, label).toBe(from);
  expect(spans.at(-1)?.hi, label).toBe(until + 1);
  for (const [i, s] of spans.entries()) {
    expect(s.lo < s.hi, label).toBe(true);
    if (i > 0) expect(s.lo, label).toBe(spans[i - 1]!.hi);
  }
  for (const s of split.rolled) {
    expect([s.lo % HOUR, s.hi % HOUR, crosses(s, since)], label).toEqual([0, 0, false]);
  }
  for (const s of split.minutes) {
    expect([s.lo % MINUTE, s.hi % MINUTE, crosses(s, since), s.lo >= minutesFrom], label).toEqual([0, 0, false, true]);
    // Inside a partial hour: whole hours are the hourly rollups'.
    expect(Math.floor(s.lo / HOUR) === Math.floor((s.hi - 1) / HOUR), label).toBe(true);
  }
  return split;
}

describe('splitWindow', () => {
  it('covers [from, until] exactly once with hours, minutes and raw spans, none of the first two crossing since', () => {
    const rand = prng(7);
    // Times on hour and minute boundaries, a millisecond beside them, or anywhere.
    const time = (base: number, range: number) => {
      const t = base + Math.floor(rand() * range);
      const r = rand();
      if (r < 0.2) return Math.floor(t / HOUR) * HOUR + [-1, 0, 1][Math.floor(rand() * 3)]!;
      if (r < 0.4) return Math.floor(t / MINUTE) * MINUTE + [-1, 0, 1][Math.floor(rand() * 3)]!;
      return t;
    };
    for (let i = 0; i < 3_000; i++) {
      const from = time(T0, 3 * HOUR);
      const since = from + (rand() < 0.2 ? Math.floor(rand() * 2 * HOUR) : time(0, 7 * 24 * HOUR));
      const until = since + (rand() < 0.2 ? Math.floor(rand() * 2 * HOUR) : time(0, 7 * 24 * HOUR));
      const minutesFrom = [0, Number.POSITIVE_INFINITY, time(from - HOUR, until - from + 2 * HOUR)][Math.floor(rand() * 3)]!;
      const split = expectSound(from, since, until, minutesFrom);
      if (minutesFrom <= from) {
        // Only partial minutes are left raw: one around each of from, since and until.
        expect(length(split.raw)).toBeLessThan(3 * MINUTE);
      }
      if (minutesFrom > until) expect(split.minutes).toEqual([]);
    }
  });

  it('reads whole minutes of the partial hours from the minute rollups, partial minutes raw', () => {
    const until = T0 + 17 * HOUR + 37 * MINUTE + 12_345;
    const since = until - 24 * HOUR;
    const from = since - 24 * HOUR;
    const at = (h: number, m: number, ms = 12_345) => T0 + h * HOUR + m * MINUTE + ms;
    expect(splitWindow(from, since, until, true, 0)).toEqual({
      rolled: [
        { lo: T0 - 30 * HOUR, hi: T0 - 7 * HOUR },
        { lo: T0 - 6 * HOUR, hi: T0 + 17 * HOUR },
      ],
      minutes: [
        { lo: at(-31, 38, 0), hi: at(-30, 0, 0) },
        { lo: at(-7, 0, 0), hi: at(-7, 37, 0) },
        { lo: at(-7, 38, 0), hi: at(-6, 0, 0) },
        { lo: at(17, 0, 0), hi: at(17, 37, 0) },
      ],
      raw: [
        { lo: from, hi: at(-31, 38, 0) },
        { lo: at(-7, 37, 0), hi: at(-7, 38, 0) },
        { lo: at(17, 37, 0), hi: until + 1 },
      ],
    });
  });

  it('counts raw what lies before minutesFrom, and everything raw without rollups', () => {
    const from = T0 + 10 * MINUTE + 5;
    const since = from + 2 * HOUR;
    const until = since + 2 * HOUR;
    const minutesFrom = T0 + 2 * HOUR + 30 * MINUTE;
    const split = expectSound(from, since, until, minutesFrom);
    // since's partial hour: before since all lies before minutesFrom; after it, from minutesFrom on.
    expect(split.minutes).toEqual([
      { lo: minutesFrom, hi: T0 + 3 * HOUR },
      { lo: T0 + 4 * HOUR, hi: T0 + 4 * HOUR + 10 * MINUTE },
    ]);
    expect(split.raw[0]).toEqual({ lo: from, hi: T0 + HOUR });
    expect(splitWindow(from, since, until)).toEqual({
      rolled: split.rolled,
      minutes: [],
      raw: [
        { lo: from, hi: T0 + HOUR },
        { lo: T0 + 2 * HOUR, hi: T0 + 3 * HOUR },
        { lo: T0 + 4 * HOUR, hi: until + 1 },
      ],
    });
    expect(splitWindow(from, since, until, false, 0)).toEqual({ rolled: [], minutes: [], raw: [{ lo: from, hi: until + 1 }] });
  });
});
