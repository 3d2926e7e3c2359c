/** What the worker-throughput benchmarks share: quiet child processes, paused queues, the ceiling worker. */
import { spawn, type ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Db } from '../src/db.js';
import { pathWithThisNode } from '../src/node-version.js';
import { ROOT, stop, TSX } from './lib.js';

export function spawnQuiet(args: string[], env: Record<string, string>): ChildProcess {
  const { BASE_URL: _vite, ...rest } = process.env;
  return spawn(TSX, args, { cwd: ROOT, env: { ...rest, PATH: pathWithThisNode(), ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function until(what: string, check: () => Promise<boolean>, ms = 120_000, every = 20): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, every));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function addPaused(queue: Queue, jobs: { name: string; data: unknown; opts: object }[]): Promise<void> {
  await queue.pause();
  for (let i = 0; i < jobs.length; i += 1000) await queue.addBulk(jobs.slice(i, i + 1000) as never);
}

/** Runs the queued jobs: resume, then wait until `done()` counts all of them. Returns per second. */
export async function timed(queue: Queue, n: number, done: () => Promise<number>): Promise<number> {
  const t0 = performance.now();
  await queue.resume();
  await until(`${n} jobs of ${queue.name}`, async () => (await done()) >= n);
  return n / ((performance.now() - t0) / 1000);
}

export async function count(db: Db, sql: string): Promise<number> {
  const { rows } = (await db.raw(sql)) as { rows: { n: number | string }[] };
  return Number(rows[0]?.n ?? 0);
}

/**
 * The ceiling worker (bench/servers/worker-ceiling.ts) at `concurrency`: `round(n, tag)` pushes n jobs
 * through it, one Postgres UPDATE each, and returns jobs per second.
 */
export async function startCeiling(
  db: Db,
  connection: Redis,
  urls: { databaseUrl: string; redisUrl: string },
  prefix: string,
  concurrency: number,
) {
  await db.raw('DROP TABLE IF EXISTS bench_worker_ceiling');
  const queue = new Queue('bench-ceiling', { connection, prefix });
  await queue.obliterate({ force: true });
  const child = spawnQuiet(['bench/servers/worker-ceiling.ts', urls.databaseUrl, urls.redisUrl, prefix, String(concurrency)], {});
  await until('the ceiling worker', async () => (await queue.getWorkersCount()) > 0, 60_000, 200);
  await until('the ceiling table', async () => Boolean(await db.schema.hasTable('bench_worker_ceiling')), 10_000, 100);
  return {
    async round(n: number, tag: string): Promise<number> {
      await db.raw('TRUNCATE bench_worker_ceiling');
      await db.raw('INSERT INTO bench_worker_ceiling (id) SELECT ? || g FROM generate_series(1, ?) g', [`${tag}-`, n]);
      await addPaused(
        queue,
        Array.from({ length: n }, (_, i) => ({
          name: 'ceiling',
          data: { id: `${tag}-${i + 1}` },
          opts: { jobId: `c${tag}-${i + 1}`, removeOnComplete: true },
        })),
      );
      return timed(queue, n, () => count(db, 'SELECT count(*) AS n FROM bench_worker_ceiling WHERE done'));
    },
    async close(): Promise<void> {
      await stop(child);
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      await db.raw('DROP TABLE IF EXISTS bench_worker_ceiling').catch(() => {});
    },
  };
}
