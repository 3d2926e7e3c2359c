import type { Histogram, Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); past the last bound they count only in `count`. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram for the request path, exposed through prom-client's registry with the lines its Histogram
 * writes (cumulative `_bucket` with `le`, `_sum`, `_count`). The difference is the observe: a series is
 * bound once (`bind(labels)` answers the same recorder for the same labels), and a recorder is a bucket
 * scan and three additions, where prom-client checks, hashes and looks up the labels on every observe
 * (docs/decisions/metrics.md, "The request path's histogram").
 */
export class BoundHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();
  private readonly recorders = new Map<string, (value: number) => void>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    private readonly buckets: readonly number[],
    registers: Registry[],
  ) {
    // prom-client's registry asks a metric for its name, get() (or getForPromString()) and reset() only.
    for (const r of registers) r.registerMetric(this as unknown as Histogram);
  }

  /** The recorder of the series with these labels (seconds in), made on first ask. */
  bind(labels: Record<L, string>): (value: number) => void {
    const key = this.labelNames.map((n) => labels[n]).join('\u0000');
    let recorder = this.recorders.get(key);
    if (recorder) return recorder;
    const s: Series = { labels: { ...labels }, counts: new Float64Array(this.buckets.length), sum: 0, count: 0 };
    const bounds = this.buckets;
    const n = bounds.length;
    recorder = (value: number) => {
      let i = 0;
      while (i < n && value > bounds[i]!) i++;
      if (i < n) s.counts[i]!++;
      s.sum += value;
      s.count++;
    };
    this.series.set(key, s);
    this.recorders.set(key, recorder);
    return recorder;
  }

  /** What prom-client's registry formats: each series' labels shared by its lines, `le` on the buckets. */
  async getForPromString() {
    const values = [];
    for (const s of this.series.values()) {
      let total = 0;
      for (const [i, le] of this.buckets.entries()) {
        total += s.counts[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: total, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's Histogram.get(): each line's labels with its series' labels spread in. */
  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })),
    };
  }

  /** Zeroes every series (the recorders handed out stay bound to them). */
  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
