/**
 * The ceiling for the worker-throughput benchmarks (webhook events, mail sends), measured in the same run: a bare BullMQ worker
 * doing one Postgres UPDATE per job (no zod, no logger, no transaction), at the same concurrency and
 * Postgres pool size as the real pool.
 *   tsx bench/servers/worker-ceiling.ts DATABASE_URL REDIS_URL PREFIX CONCURRENCY
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';

const [databaseUrl, redisUrl, prefix, concurrencyArg] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const connection = new Redis(redisUrl ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
await pool.query('CREATE TABLE IF NOT EXISTS bench_worker_ceiling (id text PRIMARY KEY, done boolean NOT NULL DEFAULT false)');

const worker = new Worker(
  'bench-ceiling',
  async (job) => {
    await pool.query({ name: 'ceiling', text: 'UPDATE bench_worker_ceiling SET done = true WHERE id = $1', values: [job.data.id] });
  },
  { connection, prefix, concurrency: Number(concurrencyArg ?? 1) },
);
worker.on('error', () => {});
await worker.waitUntilReady();

process.on('SIGTERM', async () => {
  await worker.close();
  await pool.end();
  connection.disconnect();
  process.exit(0);
});
