import { Redis } from 'ioredis';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { Config } from '../src/config.js';
import { createDb, type Db, ensureDatabase, migrate } from '../src/db.js';
import { pathWithThisNode } from '../src/node-version.js';
import { registerCardWrites } from '../src/queue-version/card-writes.js';
import { newId } from '../src/ids.js';
import { cardsRepository } from '../src/review/cards/cards.repository.js';
import { createRedis, keyspace, whenReady, type Redis as ServiceRedis } from '../src/redis.js';

/** Rate limits out of the way, so a benchmark measures the work and never a 429. */
export const NO_RATE_LIMITS = Object.fromEntries(
  ['READS', 'WRITES', 'MESSAGES', 'ACCOUNT'].flatMap((b) => [
    [`RATE_${b}_PER_MINUTE`, '100000000'],
    [`RATE_${b}_BURST`, '100000000'],
  ]),
) as Record<string, string>;

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU time the server's processes spent per answered request (µs), when the target names its server. */
  cpuUs?: number;
}

export interface Target {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Each request's path, when they differ (one-click unsubscribe: a new token each); else the URL's. */
  nextPath?: () => string;
  /** Each request's body, when they differ (conversion batches: new event ids each); else `body`. */
  nextBody?: () => string;
  /** The server answering it: its process tree's CPU time is read around each run. */
  server?: ChildProcess;
  /** More processes whose CPU time counts for it (listed before and after each run: a pooler, Postgres backends). */
  alsoCpu?: () => Promise<number[]>;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/**
 * CPU time (ms, user + system, every thread) of a process and all its descendants, from /proc: the
 * servers run under tsx, whose node child does the work. A figure that machine noise moves far less
 * than requests per second, since it does not count time spent waiting for a core.
 */
export function treeCpuMs(rootPid: number): number {
  const procs = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the command (which may hold spaces) start at state: ppid is the 2nd, utime the 12th, stime the 13th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    procs.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
  }
  let ticks = 0;
  const todo = [rootPid];
  while (todo.length) {
    const pid = todo.pop()!;
    ticks += procs.get(pid)?.ticks ?? 0;
    for (const [child, p] of procs) if (p.ppid === pid) todo.push(child);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** CPU time (ms, user + system) of one process, 0 when it is gone. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Starts counting the CPU time of the processes `list` names; the returned function gives what they spent since (ms). */
export async function cpuSince(list: () => Promise<number[]>): Promise<() => Promise<number>> {
  const before = new Map((await list()).map((pid) => [pid, processCpuMs(pid)]));
  return async () => (await list()).reduce((ms, pid) => ms + processCpuMs(pid) - (before.get(pid) ?? 0), 0);
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

/** A server's environment: this process's (without vitest's BASE_URL), this Node first on PATH, then `env`. */
export function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { BASE_URL: _vite, ...rest } = process.env;
  return { ...rest, PATH: pathWithThisNode(), ...env };
}

/** Whether `url` answers below 500 within `ms`, asking every 200 ms; false at once if `child` exits. */
export async function answers(url: string, child: ChildProcess, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until && child.exitCode === null) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return true;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/** Starts a child process (a server) and resolves once `url` answers. */
export async function startServer(args: string[], env: Record<string, string>, url: string): Promise<ChildProcess> {
  const child = spawn(TSX, args, { cwd: ROOT, env: serverEnv(env), stdio: ['ignore', 'ignore', 'inherit'] });
  if (await answers(url, child, 60_000)) return child;
  child.kill('SIGKILL');
  throw new Error(`server for ${url} did not start`);
}

/**
 * Runs `fn` on the bench database, migrated, with card writes bumping their accounts' queue versions as
 * the service's do (so the API's page cache sees the seeded queue), and closes both stores after.
 */
export async function seeding<T>(config: Config, fn: (db: Db, redis: ServiceRedis) => Promise<T>): Promise<T> {
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  const redis = createRedis(config, 'producer');
  registerCardWrites(db, { redis, keyspace: keyspace(config.queuePrefix) });
  try {
    await Promise.all([migrate(db), whenReady(redis)]);
    return await fn(db, redis);
  } finally {
    redis.disconnect();
    await db.destroy();
  }
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
  const pid = target.server?.pid;
  const others = target.alsoCpu ? await cpuSince(target.alsoCpu) : null;
  const cpuBefore = pid ? treeCpuMs(pid) : 0;
  const result = await autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    connections,
    duration: seconds,
    ...(target.nextPath || target.nextBody
      ? {
          requests: [
            {
              setupRequest: (req: object) => ({
                ...req,
                ...(target.nextPath ? { path: target.nextPath() } : {}),
                ...(target.nextBody ? { body: target.nextBody() } : {}),
              }),
            },
          ],
        }
      : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs:
      pid && result.requests.total ? ((treeCpuMs(pid) - cpuBefore + ((await others?.()) ?? 0)) * 1000) / result.requests.total : undefined,
  };
}

/** Runs `fn` over `items`, `width` at a time; items per second. */
export async function pool<T>(items: T[], width: number, fn: (t: T) => Promise<void>): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
  return (items.length * 1000) / (performance.now() - start);
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
        cpuUs: rs.every((r) => r.cpuUs !== undefined) ? median(rs.map((r) => r.cpuUs!)) : undefined,
      },
    ]),
  );
}

/** A fraction as a percentage with one decimal: 0.4567 → `45.7%`. */
export const pct = (fraction: number): string => `${fmt(fraction * 100, 1)}%`;

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A run's server CPU per request as a multiple of a baseline's (`2.9×`), or null when either was not measured. */
export function cpuMultiple(r: Load, base: Load, digits = 1): string | null {
  return r.cpuUs === undefined || !base.cpuUs ? null : `${fmt(r.cpuUs / base.cpuUs, digits)}×`;
}

/**
 * The table of a `compare` run against a baseline: requests a second and their share of the baseline's,
 * latency, and what each answered request cost its server in CPU time, also as a multiple of the baseline's.
 */
export function ratioTable(targets: Target[], results: Map<string, Load>, baseline: string): string[] {
  const base = results.get(baseline)!;
  const us = (r: Load) => (r.cpuUs === undefined ? '—' : fmt(r.cpuUs));
  const times = (r: Load) => cpuMultiple(r, base, 2) ?? '—';
  return [
    '| target | req/s | of bare Express | p50 ms | p99 ms | server CPU µs per request | CPU × bare Express | errors + non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...targets.map((t) => {
      const r = results.get(t.name)!;
      return (
        `| ${t.name} | ${fmt(r.rps)} | ${fmt((r.rps / base.rps) * 100, 1)}% | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ` +
        `${us(r)} | ${times(r)} | ${r.errors + r.non2xx} |`
      );
    }),
  ];
}

/** One approval card waiting to ship `work` (a mail draft, a network message…), as the agent would file it. */
export async function benchCard(db: Db, accountId: string, sourceType: string, payload: Record<string, unknown>): Promise<string> {
  const card = await cardsRepository(db).insert({
    id: newId('card'),
    accountId,
    kind: 'approval',
    sourceType,
    title: 'Bench',
    actions: [],
    primaryLabel: '',
    ladderChecked: true,
    payload,
  });
  return card.id;
}

/**
 * Removes every Redis key under a benchmark's queue prefix (the jobs a benchmark left queued with no worker to run
 * them), so a later test run's key scans do not walk a benchmark's leftovers. Bounded: SCAN in pages of 1,000.
 */
export async function dropPrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let removed = 0;
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1_000 }) as AsyncIterable<string[]>) {
      if (keys.length) removed += await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
  return removed;
}
