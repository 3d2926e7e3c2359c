import { useId } from 'react';
import { CsvDownload } from '../CsvDownload';
import { DataTable } from '../DataTable';
import { formatDate } from '../ui';
import { shown, words } from './ResultsTables';

/** An experiment as `/results` reports it: the stopping rule's decision and figures computed by the service. */
export interface Experiment {
  id: string;
  status: 'proposed' | 'running' | 'paused' | 'decided' | 'no_winner' | 'dismissed';
  thing: string;
  topic: string;
  hypothesis: string;
  metric: string;
  plannedPerVariant: number;
  variants: {
    key: string;
    description: string;
    exposures: number;
    outcomes: number;
    rate: number | null;
    interval: [number, number] | null;
    difference: { estimate: number; interval: [number, number]; level: number } | null;
    sent: number;
  }[];
  decision: {
    state: 'collecting' | 'winner' | 'no_difference' | 'stopped' | 'proposed' | 'dismissed';
    winner: string | null;
    citation: string | null;
    plannedReached: boolean;
  };
  startedAt: number | null;
  decidedAt: number | null;
}

const pct = (x: number) => `${(x * 100).toFixed(1).replace(/\.0$/, '')}%`;
const points = (x: number) => `${x >= 0 ? '+' : '−'}${(Math.abs(x) * 100).toFixed(1).replace(/\.0$/, '')}`;

/**
 * The service's decision in plain words. Only the stopping rule names a winner (`decision.winner`, set when it decided):
 * while it collects, no variant is called ahead, whatever the rates read.
 */
export function decisionWords(e: Experiment): string {
  const d = e.decision;
  if (e.status === 'paused')
    return 'Paused: the variants’ counts are not the planned split, so nothing is decided until a person resumes or ends it.';
  switch (d.state) {
    case 'winner':
      return `Decided: variant ${d.winner} is better, by the stopping rule.`;
    case 'no_difference':
      return 'Decided: no difference worth acting on, by the stopping rule. Neither variant is better.';
    case 'stopped':
      return 'Ended early by a person, so no winner is declared.';
    case 'proposed':
      return 'Proposed: waiting for a person to approve it. Nothing has been sent.';
    case 'dismissed':
      return 'Dismissed: it never ran.';
    default: {
      const least = Math.min(...e.variants.map((v) => v.exposures));
      const sample = `${least.toLocaleString()} of ${e.plannedPerVariant.toLocaleString()} planned per variant`;
      return `Still collecting (${sample}): no variant is called better until the stopping rule decides.`;
    }
  }
}

/** The scoreboard's experiments: each one's exposures, rates with their 95% intervals, and the decision in words. */
export function Experiments({ items }: { items: Experiment[] }) {
  const id = useId();
  if (!items.length) return <p className="muted">No experiments running or ended in this window.</p>;
  return (
    <div className="experiments">
      {items.map((e) => {
        const header = [
          'Variant',
          'What',
          'Sent',
          'Exposures',
          words(e.metric.replace(/_rate$/, 's')),
          'Rate',
          '95% interval',
          'Against A',
        ];
        const rows = e.variants.map((v, n) => [
          v.key,
          v.description,
          v.sent,
          v.exposures,
          v.outcomes,
          v.rate === null ? null : pct(v.rate),
          v.interval ? `${pct(v.interval[0])} to ${pct(v.interval[1])}` : null,
          // The control (A) is what the others are measured against.
          n === 0
            ? 'the control'
            : v.difference
              ? `${points(v.difference.estimate)} points (${pct(v.difference.level)} interval ` +
                `${points(v.difference.interval[0])} to ${points(v.difference.interval[1])})`
              : null,
        ]);
        return (
          <article key={e.id} className="card experiment" aria-labelledby={`${id}-${e.id}`}>
            <h3 id={`${id}-${e.id}`}>
              {words(e.thing)}: {e.topic}
            </h3>
            <p className="muted small">{e.hypothesis}</p>
            <p className="decision">
              <strong>{decisionWords(e)}</strong>
            </p>
            {e.decision.citation ? <p className="small">The figures: {e.decision.citation}.</p> : null}
            <DataTable
              label={`${words(e.thing)}: ${e.topic}, per variant`}
              columns={header.map((h, i) => ({
                header: h,
                cell: (r: (typeof rows)[number]) => {
                  const c = r[i];
                  return i === 0 ? c : typeof c === 'number' ? shown(c) : (c ?? 'none yet');
                },
              }))}
              rows={rows}
              rowKey={(r) => String(r[0])}
            />
            <p className="muted small">
              {e.startedAt ? `Started ${formatDate(e.startedAt)}. ` : ''}
              {e.decidedAt ? `Decided ${formatDate(e.decidedAt)}.` : ''}
            </p>
            <CsvDownload name={`experiment-${e.topic}`} header={header} rows={rows} />
          </article>
        );
      })}
    </div>
  );
}
