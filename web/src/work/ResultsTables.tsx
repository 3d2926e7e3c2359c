import { lazy, Suspense, useId, useMemo } from 'react';
import { CsvDownload } from '../CsvDownload';
import { type Column, DataTable } from '../DataTable';
import type { CsvCell } from '../csv';

/** The chart code (uPlot) is a chunk of its own, fetched when a chart is first shown. */
const SeriesChart = lazy(() => import('./SeriesChart'));

export const words = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());

/** A channel's name as people write it: the initialisms in capitals (SEO, AEO), the rest in words. */
const CHANNEL_NAMES: Record<string, string> = { seo: 'SEO', aeo: 'AEO' };
export const channelName = (key: string) => CHANNEL_NAMES[key] ?? words(key);

/** A figure as shown: a count with its separators, a share as a percentage, unknown (null) in words. Zero is 0. */
export function shown(value: number | null | undefined, kind: 'count' | 'rate' | 'amount' = 'count'): string {
  if (value === null || value === undefined) return 'unknown';
  if (kind === 'rate') return `${(value * 100).toFixed(1).replace(/\.0$/, '')}%`;
  return Number.isInteger(value) ? value.toLocaleString() : value.toFixed(3);
}

export interface SeriesFigure {
  key: string;
  kind: 'count' | 'rate' | 'amount';
  values: (number | null)[];
}

const sum = (values: (number | null)[]) => (values.some((v) => v === null) ? null : values.reduce<number>((a, b) => a + (b ?? 0), 0));

/**
 * One channel over time: a chart of its counts that moved in the window (null buckets are gaps), a caption with each
 * one's total in words, and the same numbers as a table (all figures, every bucket) that can be downloaded as CSV.
 */
export function OverTime({
  channel,
  buckets,
  by,
  figures,
}: {
  channel: string;
  buckets: number[];
  by: 'hour' | 'day';
  figures: SeriesFigure[];
}) {
  const id = useId();
  const counts = figures.filter((f) => f.kind === 'count');
  const moved = useMemo(
    () =>
      figures
        .filter((f) => f.kind === 'count' && f.values.some((v) => v !== null && v !== 0))
        .map((f) => ({ label: words(f.key), values: f.values })),
    [figures],
  );
  const when = (t: number) =>
    by === 'hour'
      ? new Date(t).toLocaleString(undefined, { day: 'numeric', month: 'short', hour: 'numeric' })
      : new Date(t).toLocaleDateString(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const per = by === 'hour' ? 'per hour' : 'per day (UTC)';
  const totals = counts.map((f) => `${words(f.key).toLowerCase()} ${shown(sum(f.values))}`).join(', ');
  const header = [by === 'hour' ? 'Hour' : 'Day (UTC)', ...figures.map((f) => words(f.key))];
  const rows = buckets.map((b, i) => [new Date(b).toISOString(), ...figures.map((f) => f.values[i] ?? null)] as CsvCell[]);
  const columns: Column<{ b: number; i: number }>[] = [
    { header: header[0]!, cell: (r) => when(r.b) },
    ...figures.map((f) => ({ header: words(f.key), cell: (r: { i: number }) => shown(f.values[r.i], f.kind) })),
  ];
  return (
    <figure className="over-time" aria-labelledby={`${id}-cap`}>
      {moved.length ? (
        <Suspense fallback={<p className="muted small">Loading the chart…</p>}>
          <SeriesChart buckets={buckets} lines={moved} utc={by === 'day'} />
        </Suspense>
      ) : (
        <p className="muted small">Nothing counted in this window.</p>
      )}
      <figcaption id={`${id}-cap`} className="small">
        {channelName(channel)} {per}, in all: {totals}.
      </figcaption>
      <details>
        <summary>The figures {per} as a table</summary>
        <DataTable
          label={`${channelName(channel)} ${per}`}
          columns={columns}
          rows={buckets.map((b, i) => ({ b, i }))}
          rowKey={(r) => String(r.b)}
        />
        <CsvDownload name={`${channel}-${per.replace(/\W+/g, '-')}`} header={header} rows={rows} />
      </details>
    </figure>
  );
}

/** A figure of the window and the baseline: a number, unknown (null), or a short text. */
export type Versus = { name: string; window: number | string | null; baseline: number | string | null; kind?: 'count' | 'rate' };
const cell = (v: Versus['window'], kind: Versus['kind']) => (typeof v === 'string' ? v : shown(v, kind));

/** Figures of the window beside the baseline before it, as a table that can be downloaded as CSV (unknown: empty). */
export function VersusBaseline({ name, rows }: { name: string; rows: Versus[] }) {
  return (
    <>
      <div className="table-wrap">
        <table className="versus">
          <caption className="visually-hidden">{name}: the window and the baseline before it</caption>
          <thead>
            <tr>
              <th scope="col">Figure</th>
              <th scope="col">Window</th>
              <th scope="col">Baseline</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.name}>
                <th scope="row">{r.name}</th>
                <td>{cell(r.window, r.kind)}</td>
                <td>{cell(r.baseline, r.kind)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <CsvDownload
        name={`${name.toLowerCase()}-window-vs-baseline`}
        header={['Figure', 'Window', 'Baseline']}
        rows={rows.map((r) => [r.name, r.window, r.baseline])}
      />
    </>
  );
}
