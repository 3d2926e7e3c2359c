/**
 * How `/results` splits a window between the hourly rollups and raw rows (docs/decisions/results.md, "Rollups"):
 * whole hours inside the baseline [from, since) or inside the window [since, until] are read from the rollups;
 * the partial hours at the edges (at most one hour each around `from`, `since` and `until`) are counted raw.
 * Spans are half-open [lo, hi) in epoch ms; together `rolled` and `raw` cover [from, until] exactly once.
 */
export const ROLLUP_BUCKET_MS = 3_600_000;

export interface Span {
  lo: number;
  hi: number;
}

export interface WindowSplit {
  rolled: Span[];
  raw: Span[];
}

const floorHour = (t: number) => Math.floor(t / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
const ceilHour = (t: number) => Math.ceil(t / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;

/** The split of [from, until] (until inclusive) with `since` inside it; `rollups: false` counts all of it raw. */
export function splitWindow(from: number, since: number, until: number, rollups = true): WindowSplit {
  const end = until + 1;
  if (!rollups) return { rolled: [], raw: [{ lo: from, hi: end }] };
  const baseLo = ceilHour(from);
  const baseHi = Math.max(baseLo, floorHour(since));
  const curLo = Math.max(baseHi, ceilHour(since));
  const curHi = Math.max(curLo, floorHour(end));
  const clip = (s: Span): Span => ({ lo: Math.max(s.lo, from), hi: Math.min(s.hi, end) });
  const nonEmpty = (spans: Span[]) => spans.map(clip).filter((s) => s.lo < s.hi);
  return {
    rolled: nonEmpty([
      { lo: baseLo, hi: baseHi },
      { lo: curLo, hi: curHi },
    ]),
    raw: nonEmpty([
      { lo: from, hi: baseLo },
      { lo: baseHi, hi: curLo },
      { lo: curHi, hi: end },
    ]),
  };
}

/** `(col >= ? AND col < ? OR ...)` over the spans, with its bindings; `false` without spans. */
export function inSpans(col: string, spans: Span[]): { sql: string; bindings: number[] } {
  if (!spans.length) return { sql: 'false', bindings: [] };
  return {
    sql: `(${spans.map(() => `${col} >= ? AND ${col} < ?`).join(' OR ')})`,
    bindings: spans.flatMap((s) => [s.lo, s.hi]),
  };
}
