import { useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { FormError, formatDate, Loading, PageHeader } from '../ui';
import { type Experiment, Experiments } from './ResultsExperiments';
import { channelName, OverTime, type SeriesFigure, type Versus, VersusBaseline, words } from './ResultsTables';

type Section =
  | { available: true; data: { window: Record<string, unknown>; baseline: Record<string, unknown> } }
  | { available: false; reason: string };
type SeriesChannel = { available: true; figures: SeriesFigure[] } | { available: false; reason: string };
interface Series {
  by: 'hour' | 'day';
  buckets: number[];
  channels: Record<string, SeriesChannel>;
}

const HOUR = 3_600_000;
/** The charts' windows (the series route's), and the `/results` window asked for beside them (clamped at 7 days there). */
const WINDOWS = [
  { key: '24h', label: 'The last 24 hours', ms: 24 * HOUR },
  { key: '7d', label: 'The last 7 days', ms: 7 * 24 * HOUR },
  { key: '30d', label: 'The last 30 days', ms: 30 * 24 * HOUR },
] as const;

/** A metrics record's figures (numbers, unknown, short text), one level of nesting named "outer: inner". */
function figures(data: Record<string, unknown>, prefix = ''): { name: string; value: number | string | null }[] {
  const out: { name: string; value: number | string | null }[] = [];
  for (const [key, value] of Object.entries(data)) {
    const name = prefix ? `${prefix}: ${words(key)}` : words(key);
    if (typeof value === 'number' || value === null) out.push({ name, value });
    else if (typeof value === 'string' && value.length <= 80) out.push({ name, value });
    else if (typeof value === 'boolean') out.push({ name, value: value ? 'yes' : 'no' });
    else if (value && typeof value === 'object' && !Array.isArray(value) && !prefix)
      out.push(...figures(value as Record<string, unknown>, name));
  }
  return out;
}

/** The window's figures beside the baseline's, by name. */
function versus(data: { window: Record<string, unknown>; baseline: Record<string, unknown> }): Versus[] {
  const before = new Map(figures(data.baseline).map((f) => [f.name, f.value]));
  // A rate (replyRate) is a share of two counts: shown as a percentage.
  return figures(data.window).map((f) => ({
    name: f.name,
    window: f.value,
    baseline: before.get(f.name) ?? null,
    kind: f.name.endsWith(' Rate') ? 'rate' : 'count',
  }));
}

/**
 * The scoreboard: each channel's figures over time (GET /dashboard/api/results/series, charted), its totals against the
 * baseline (GET /api/v1/results under the dashboard) or the reason it has none, the agent's own work, and the
 * experiments with the stopping rule's decision. Zero and unknown are different: a null figure says "unknown".
 */
export function Results() {
  const id = useId();
  const [windowKey, setWindowKey] = useState<(typeof WINDOWS)[number]['key']>('24h');
  const [results, setResults] = useState<Record<string, unknown> | null>(null);
  const [series, setSeries] = useState<Series | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ms = WINDOWS.find((w) => w.key === windowKey)!.ms;
    setResults(null);
    setSeries(null);
    Promise.all([
      api<{ results: Record<string, unknown> }>('GET', `/v1/results?since=${Date.now() - ms}`),
      api<Series>('GET', `/results/series?window=${windowKey}`),
    ]).then(
      ([r, s]) => {
        setResults(r.results);
        setSeries(s);
        setError(null);
      },
      (err: unknown) => setError(errorText(err)),
    );
  }, [windowKey]);

  const sections = Object.entries(results ?? {}).filter(
    (e): e is [string, Section] => e[0] !== 'harness' && !!e[1] && typeof e[1] === 'object' && 'available' in (e[1] as object),
  );
  const harness = results?.harness as Section | undefined;
  const win = results?.window as { since?: number; until?: number; clamped?: boolean } | undefined;
  const base = results?.baseline as { since?: number; until?: number } | undefined;
  return (
    <section>
      <PageHeader title="Results">What the agent's work did, channel by channel.</PageHeader>
      <div className="field narrow">
        <label htmlFor={`${id}-window`}>Window</label>
        <select id={`${id}-window`} value={windowKey} onChange={(e) => setWindowKey(e.target.value as typeof windowKey)}>
          {WINDOWS.map((w) => (
            <option key={w.key} value={w.key}>
              {w.label}
            </option>
          ))}
        </select>
      </div>
      <FormError error={error} />
      {!results && !error ? <Loading /> : null}
      {win?.since && base?.since ? (
        <p className="muted small">
          Totals from {formatDate(win.since)} to {formatDate(win.until)}, beside the baseline from {formatDate(base.since)}.
          {win.clamped ? ' Totals reach back 7 days at most; the charts show the whole window.' : ''}
        </p>
      ) : null}
      <div className="scoreboard charts">
        {results && series
          ? sections.map(([name, s]) => {
              const over = series.channels[name];
              return (
                <article key={name} className="card channel" aria-labelledby={`${id}-${name}`}>
                  <h2 id={`${id}-${name}`}>{channelName(name)}</h2>
                  {s.available ? (
                    <>
                      {over?.available ? <OverTime channel={name} buckets={series.buckets} by={series.by} figures={over.figures} /> : null}
                      <VersusBaseline name={channelName(name)} rows={versus(s.data)} />
                    </>
                  ) : (
                    <p className="muted">Not available: {s.reason}</p>
                  )}
                </article>
              );
            })
          : null}
      </div>
      {results && harness?.available ? (
        <section className="card harness" aria-labelledby={`${id}-harness`}>
          <h2 id={`${id}-harness`}>The agent's own work</h2>
          <VersusBaseline name="Harness" rows={versus(harness.data)} />
        </section>
      ) : null}
      {results ? (
        <section aria-labelledby={`${id}-experiments`}>
          <h2 id={`${id}-experiments`}>Experiments</h2>
          <Experiments items={(results.experiments as Experiment[] | undefined) ?? []} />
        </section>
      ) : null}
    </section>
  );
}
