import { useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { FormError, formatDate, Loading, PageHeader } from '../ui';

type Section = { available: true; data: Record<string, unknown> } | { available: false; reason: string };

const WINDOWS = [
  { label: 'The last 24 hours', ms: 24 * 3_600_000 },
  { label: 'The last 3 days', ms: 3 * 24 * 3_600_000 },
  { label: 'The last 7 days', ms: 7 * 24 * 3_600_000 },
];

const words = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());

/** A channel's name as people write it: the initialisms in capitals (SEO, AEO), the rest in words. */
const CHANNEL_NAMES: Record<string, string> = { seo: 'SEO', aeo: 'AEO' };
const channelName = (key: string) => CHANNEL_NAMES[key] ?? words(key);

/** The figures of a section's data: numbers and short strings, one level of nesting named "outer: inner". */
function figures(data: Record<string, unknown>, prefix = ''): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const [key, value] of Object.entries(data)) {
    const name = prefix ? `${prefix}: ${words(key)}` : words(key);
    if (typeof value === 'number') out.push({ name, value: Number.isInteger(value) ? value.toLocaleString() : value.toFixed(3) });
    else if (value === null) out.push({ name, value: 'unknown' });
    else if (typeof value === 'string' && value.length <= 80) out.push({ name, value });
    else if (typeof value === 'boolean') out.push({ name, value: value ? 'yes' : 'no' });
    else if (value && typeof value === 'object' && !Array.isArray(value) && !prefix)
      out.push(...figures(value as Record<string, unknown>, name));
  }
  return out;
}

/**
 * The scoreboard: GET /api/v1/results under the dashboard, each channel's figures or the reason it has none.
 * Zero and unknown are different: a null figure says "unknown".
 */
export function Results() {
  const id = useId();
  const [windowMs, setWindowMs] = useState(WINDOWS[0]!.ms);
  const [results, setResults] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setResults(null);
    api<{ results: Record<string, unknown> }>('GET', `/v1/results?since=${Date.now() - windowMs}`).then(
      (r) => {
        setResults(r.results);
        setError(null);
      },
      (err: unknown) => setError(errorText(err)),
    );
  }, [windowMs]);

  const sections = Object.entries(results ?? {}).filter(
    (e): e is [string, Section] => !!e[1] && typeof e[1] === 'object' && 'available' in (e[1] as object),
  );
  const win = results?.window as { since?: number; until?: number } | undefined;
  return (
    <section>
      <PageHeader title="Results">What the agent's work did, channel by channel.</PageHeader>
      <div className="field narrow">
        <label htmlFor={`${id}-window`}>Window</label>
        <select id={`${id}-window`} value={windowMs} onChange={(e) => setWindowMs(Number(e.target.value))}>
          {WINDOWS.map((w) => (
            <option key={w.ms} value={w.ms}>
              {w.label}
            </option>
          ))}
        </select>
      </div>
      <FormError error={error} />
      {!results && !error ? <Loading /> : null}
      {win?.since ? (
        <p className="muted small">
          From {formatDate(win.since)}
          {win.until ? ` to ${formatDate(win.until)}` : ''}.
        </p>
      ) : null}
      <div className="scoreboard">
        {sections.map(([name, s]) => (
          <article key={name} className="card channel" aria-labelledby={`${id}-${name}`}>
            <h2 id={`${id}-${name}`}>{channelName(name)}</h2>
            {s.available ? (
              <dl className="card-facts">
                {figures(s.data).map((f) => (
                  <div key={f.name}>
                    <dt>{f.name}</dt>
                    <dd>{f.value}</dd>
                  </div>
                ))}
              </dl>
            ) : (
              <p className="muted">Not available: {s.reason}</p>
            )}
          </article>
        ))}
      </div>
    </section>
  );
}
