import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { configWith } from '../test/helpers/config.js';
import { ensureDatabase } from '../src/db.js';
import { fmt, median } from './lib.js';
import type { BenchContext, Section } from './run.js';

const IN_FLIGHT = 10;

/** Runs `op` with IN_FLIGHT callers for `seconds`; operations per second. */
async function rate(seconds: number, op: () => Promise<unknown>): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        await op();
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - start);
}

/**
 * The stores' ceilings as this service's own clients see them (redis-benchmark style: one client
 * process, 10 operations in flight): what one Postgres query, one committed insert, one Redis command
 * and one BullMQ add cost on this machine, beside which the service's figures can be read.
 */
export async function storeCeilings(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  await ensureDatabase(config.databaseUrl);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: IN_FLIGHT });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_ceiling (id bigserial PRIMARY KEY, at bigint NOT NULL, body text NOT NULL)');
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-ceiling', { connection: redis, prefix: '{benchceil}' });
  const body = JSON.stringify({ email: 'jane@acme.test', company: 'acme.test', plan: 'trial' });
  const ops: Array<[string, () => Promise<unknown>]> = [
    ['Postgres `SELECT 1`', () => pool.query('SELECT 1')],
    ['Postgres single-row INSERT, committed', () => pool.query('INSERT INTO bench_ceiling (at, body) VALUES ($1, $2)', [Date.now(), body])],
    ['Redis `INCR`', () => redis.incr('{benchceil}:n')],
    ['BullMQ `Queue.add`', () => queue.add('x', { id: 'dlv_0123456789' }, { removeOnComplete: true })],
  ];
  try {
    const runs = new Map<string, number[]>(ops.map(([name]) => [name, []]));
    for (const [, op] of ops) await rate(0.5, op);
    for (let i = 0; i < ctx.rounds; i++) for (const [name, op] of ops) runs.get(name)!.push(await rate(Math.min(ctx.seconds, 3), op));
    const rows = ops.map(([name]) => `| ${name} | ${fmt(median(runs.get(name)!))} |`);
    return {
      title: 'Store ceilings',
      body: [
        `One client process, ${IN_FLIGHT} operations in flight, ${ctx.rounds} interleaved rounds; medians. These are what the`,
        "service's own clients (pg, ioredis, BullMQ) get from the stores on this machine, with nothing else around them.",
        '',
        '| operation | per second |',
        '|---|---:|',
        ...rows,
      ].join('\n'),
    };
  } finally {
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    await pool.query('DROP TABLE IF EXISTS bench_ceiling');
    await pool.end();
    redis.disconnect();
  }
}
