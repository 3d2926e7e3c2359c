import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensurePackage, freePort, reapStaleRuns, startDaemon, stopByPidFile, waitFor } from './processes.js';

/**
 * A Prometheus server of the test's own: Debian's `prometheus` package (installed by
 * scripts/ensure-package.sh when missing), started as /usr/bin/prometheus with its own config, its own
 * storage in a temporary directory and its own loopback port. The package's system service (port 9090,
 * /var/lib/prometheus) is never started or used.
 */
export const PROMETHEUS = '/usr/bin/prometheus';
export const PROMTOOL = '/usr/bin/promtool';

/** Installs Debian's prometheus package (it brings promtool) when missing. */
export function ensurePrometheus(): void {
  ensurePackage('prometheus', PROMETHEUS);
}

/** One scrape job: its name (the `job` label) and the `host:port` targets it scrapes at `/metrics`. */
export interface ScrapeJob {
  job: string;
  targets: string[];
}

/** One series of an instant query's answer: its labels and its value. */
export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  url: string;
  pid: number;
  /** An instant query (`/api/v1/query`); throws with Prometheus's error when the query fails. */
  query(expr: string): Promise<Sample[]>;
  /** Polls `expr` until `accept` takes its answer (e.g. a counter reaching a value); returns that answer. */
  waitFor(expr: string, accept: (samples: Sample[]) => boolean, what: string, timeoutMs?: number): Promise<Sample[]>;
  stop(): Promise<void>;
}

const DIR_PREFIX = 'gas-prometheus-';

/** Stops the Prometheus servers of test runs that are gone (killed before their teardown). */
const reapStale = () => reapStaleRuns(DIR_PREFIX, (dir) => stopByPidFile(path.join(dir, 'prometheus.pid')));

/** The generated config: every job scraped every `intervalSeconds`, no rules, no alerting. */
export function scrapeConfig(jobs: ScrapeJob[], intervalSeconds: number): string {
  const lines = ['global:', `  scrape_interval: ${intervalSeconds}s`, `  scrape_timeout: ${intervalSeconds}s`];
  lines.push(jobs.length ? 'scrape_configs:' : 'scrape_configs: []');
  for (const { job, targets } of jobs) {
    lines.push(`  - job_name: ${JSON.stringify(job)}`, '    static_configs:', `      - targets: ${JSON.stringify(targets)}`);
  }
  return `${lines.join('\n')}\n`;
}

interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

/** Starts a private Prometheus scraping `jobs` every `intervalSeconds` (1 s by default) and waits until it is ready. */
export async function startPrometheus(jobs: ScrapeJob[], { intervalSeconds = 1 } = {}): Promise<PrometheusServer> {
  ensurePrometheus();
  reapStale();
  const dir = mkdtempSync(path.join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(config, scrapeConfig(jobs, intervalSeconds));
  const args = [
    `--config.file=${config}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // Console templates are the package's, under /etc/prometheus; none are used here.
    `--web.console.templates=${path.join(dir, 'consoles')}`,
    `--web.console.libraries=${path.join(dir, 'console_libraries')}`,
  ];
  const url = `http://127.0.0.1:${port}`;
  const daemon = await startDaemon({
    name: 'prometheus',
    bin: PROMETHEUS,
    args,
    dir,
    ready: async () => (await fetch(`${url}/-/ready`)).ok,
    timeoutMs: 30_000,
  });

  const query = async (expr: string): Promise<Sample[]> => {
    const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as QueryAnswer;
    if (body.status !== 'success' || !body.data) throw new Error(`query ${expr}: ${body.error ?? res.status}`);
    if (body.data.resultType !== 'vector') throw new Error(`query ${expr}: a ${body.data.resultType}, not an instant vector`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };

  return {
    url,
    pid: daemon.pid,
    query,
    async waitFor(expr, accept, what, timeoutMs = 20_000) {
      let last: Sample[] | Error = [];
      try {
        await waitFor(
          async () => {
            last = await query(expr).catch((err: Error) => err);
            return !(last instanceof Error) && accept(last);
          },
          what,
          timeoutMs,
        );
      } catch (err) {
        const answer = last instanceof Error ? last.message : JSON.stringify(last);
        throw new Error(`${(err as Error).message}; last answer to ${expr}: ${answer}`);
      }
      if (last instanceof Error) throw last;
      return last;
    },
    stop: daemon.stop,
  };
}
