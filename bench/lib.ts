import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export interface Target {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
    srv.on('error', reject);
  });
}

/** Starts a child process (a server) and resolves once `url` answers. */
export async function startServer(args: string[], env: Record<string, string>, url: string): Promise<ChildProcess> {
  const { BASE_URL: _vite, ...rest } = process.env;
  const child = spawn(TSX, args, { cwd: ROOT, env: { ...rest, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return child;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`server for ${url} did not start`);
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 5_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** One autocannon run: requests a second and latency percentiles (ms). */
export async function load(target: Target, seconds: number, connections = 10): Promise<Load> {
  const result = await autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    connections,
    duration: seconds,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * Measures several targets in interleaved rounds (A B C A B C …) so drift on a noisy machine hits
 * them alike; reports the median of the rounds for each.
 */
export async function compare(targets: Target[], rounds: number, seconds: number, connections = 10): Promise<Map<string, Load>> {
  const runs = new Map<string, Load[]>(targets.map((t) => [t.name, []]));
  for (const t of targets) await load(t, 1, connections); // warm-up
  for (let i = 0; i < rounds; i++) {
    for (const t of targets) runs.get(t.name)!.push(await load(t, seconds, connections));
  }
  return new Map(
    [...runs].map(([name, rs]) => [
      name,
      {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        errors: rs.reduce((a, r) => a + r.errors, 0),
        non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
      },
    ]),
  );
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
