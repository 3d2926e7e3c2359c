/**
 * How `/results` splits a window between the rollups and raw rows (docs/decisions/results.md, "How a window is read"):
 * whole hours inside the baseline [from, since) or inside the window [since, until] are read from the hourly rollups;
 * in the partial hours at the edges (at most one hour each around `from`, `since` and `until`) whole minutes are read
 * from the minute rollups once they are complete there (at or after `minutesFrom`), and the partial minutes are
 * counted raw. Spans are half-open [lo, hi) in epoch ms; together `rolled`, `minutes` and `raw` cover [from, until]
 * exactly once, and no `rolled` or `minutes` span crosses `since` (a bucket's side of it is its start's).
 */
export const ROLLUP_BUCKET_MS = 3_600_000;
export const MINUTE_BUCKET_MS = 60_000;

export interface Span {
  lo: number;
  hi: number;
}

export interface WindowSplit {
  /** Whole hours: the hourly rollups. */
  rolled: Span[];
  /** Whole minutes of the partial hours: the minute rollups. */
  minutes: Span[];
  /** The rest: raw rows. */
  raw: Span[];
}

const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;

/** Adjacent spans joined (a raw span may cross `since`: a raw row's side is its own time's). */
function joined(spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && last.hi === s.lo) last.hi = s.hi;
    else out.push({ ...s });
  }
  return out;
}

/**
 * The split of [from, until] (until inclusive) with `since` inside it; `rollups: false` counts all of it raw.
 * `minutesFrom`: the time from which the minute rollups are complete (none before it: Infinity, the default).
 */
export function splitWindow(
  from: number,
  since: number,
  until: number,
  rollups = true,
  minutesFrom = Number.POSITIVE_INFINITY,
): WindowSplit {
  const end = until + 1;
  if (!rollups) return { rolled: [], minutes: [], raw: [{ lo: from, hi: end }] };
  const baseLo = ceilTo(from, ROLLUP_BUCKET_MS);
  const baseHi = Math.max(baseLo, floorTo(since, ROLLUP_BUCKET_MS));
  const curLo = Math.max(baseHi, ceilTo(since, ROLLUP_BUCKET_MS));
  const curHi = Math.max(curLo, floorTo(end, ROLLUP_BUCKET_MS));
  const clip = (s: Span): Span => ({ lo: Math.max(s.lo, from), hi: Math.min(s.hi, end) });
  const nonEmpty = (spans: Span[]) => spans.map(clip).filter((s) => s.lo < s.hi);
  // The partial hours, cut at `since`.
  const partial = nonEmpty([
    { lo: from, hi: baseLo },
    { lo: baseHi, hi: curLo },
    { lo: curHi, hi: end },
  ]).flatMap((s) =>
    s.lo < since && since < s.hi
      ? [
          { lo: s.lo, hi: since },
          { lo: since, hi: s.hi },
        ]
      : [s],
  );
  const minutes: Span[] = [];
  const raw: Span[] = [];
  const first = ceilTo(minutesFrom, MINUTE_BUCKET_MS);
  for (const s of partial) {
    const lo = Math.max(ceilTo(s.lo, MINUTE_BUCKET_MS), first);
    const hi = floorTo(s.hi, MINUTE_BUCKET_MS);
    if (lo >= hi) {
      raw.push(s);
      continue;
    }
    minutes.push({ lo, hi });
    raw.push(
      ...[
        { lo: s.lo, hi: lo },
        { lo: hi, hi: s.hi },
      ].filter((r) => r.lo < r.hi),
    );
  }
  return {
    rolled: nonEmpty([
      { lo: baseLo, hi: baseHi },
      { lo: curLo, hi: curHi },
    ]),
    minutes,
    raw: joined(raw),
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
