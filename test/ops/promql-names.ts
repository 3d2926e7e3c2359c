import { CATALOG } from './catalog.js';

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];
const TARGET_LABELS = ['job', 'instance'];

/** What an expression names: each metric with the label names its selectors match on, and the labels it groups by. */
export interface Named {
  metrics: Map<string, Set<string>>;
  grouping: Set<string>;
}

/** Reads the metric and label names out of a PromQL expression (string literals left out). */
export function namesIn(expr: string): Named {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const metrics = new Map<string, Set<string>>();
  const add = (name: string) => metrics.get(name) ?? metrics.set(name, new Set()).get(name)!;
  for (const m of bare.matchAll(/\b(gas_[a-z0-9_]+|up)\b\s*(\{([^}]*)\})?/g)) {
    const labels = add(m[1]!);
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.add(l[1]!);
  }
  const grouping = new Set<string>();
  for (const g of bare.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g)) {
    for (const l of g[1]!.split(',')) if (l.trim()) grouping.add(l.trim());
  }
  return { metrics, grouping };
}

/**
 * The label names a scraped series of `name` carries in Prometheus, or null when the catalog (or the
 * extra metrics given, such as prom-client's defaults) has no such series. A histogram is its
 * `_bucket` (with `le`), `_sum` and `_count`. A label the target also sets (`job`) arrives as `exported_job`.
 */
export function seriesLabels(name: string, extra: Record<string, { labels: string[] }>): string[] | null {
  if (name === 'up') return [...TARGET_LABELS];
  const scraped = (labels: string[]) => [...labels.map((l) => (TARGET_LABELS.includes(l) ? `exported_${l}` : l)), ...TARGET_LABELS];
  const direct = CATALOG[name] ?? extra[name];
  if (direct) return CATALOG[name]?.type === 'histogram' ? null : scraped(direct.labels);
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const base = CATALOG[name.slice(0, -suffix.length)];
    if (base?.type === 'histogram') return scraped(suffix === '_bucket' ? [...base.labels, 'le'] : base.labels);
  }
  return null;
}

/** Every problem with the names in `expr`: unknown metrics, labels a metric does not carry, grouping by labels none carries. */
export function nameProblems(expr: string, extra: Record<string, { labels: string[] }>): string[] {
  const { metrics, grouping } = namesIn(expr);
  const problems: string[] = [];
  if (metrics.size === 0) problems.push(`${expr}: names no metric`);
  const carried = new Set<string>();
  for (const [name, labels] of metrics) {
    const known = seriesLabels(name, extra);
    if (!known) {
      problems.push(`${expr}: ${name} is not in the catalog`);
      continue;
    }
    for (const l of known) carried.add(l);
    for (const l of labels) if (!known.includes(l)) problems.push(`${expr}: ${name} has no label ${l}`);
  }
  for (const l of grouping) if (!carried.has(l)) problems.push(`${expr}: groups by ${l}, which no metric there carries`);
  return problems;
}
