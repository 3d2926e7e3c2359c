/**
 * Baselines for the webhook intake benchmark, measured in the same run: `express-post` (bare Express 5
 * answering a JSON POST with 202), `express-pg-redis-bullmq` (Express reading the body and doing one
 * Postgres query, one Redis call and one BullMQ add per request) and `express-pg-insert-redis-bullmq`
 * (the same with the query a committed INSERT: the floor of an intake that durably logs, counts and
 * queues each delivery).
 */
import express from 'express';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';

const [kind, portArg, databaseUrl, redisUrl, prefix] = process.argv.slice(2);
const port = Number(portArg);
const app = express();
app.disable('x-powered-by');

if (kind === 'express-pg-redis-bullmq' || kind === 'express-pg-insert-redis-bullmq') {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const redis = new Redis(redisUrl ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const queue = new Queue('bench-floor', { connection: redis, prefix: prefix ?? '{benchfloor}' });
  const insert = kind === 'express-pg-insert-redis-bullmq';
  if (insert)
    await pool.query('CREATE TABLE IF NOT EXISTS bench_webhook_floor (id text PRIMARY KEY, at bigint NOT NULL, body text NOT NULL)');
  let n = 0;
  app.post('/', express.json({ limit: 64_000, strict: false }), async (req, res) => {
    const id = `f-${process.pid}-${n++}`;
    // The write commits (and waits for the WAL flush) like the intake's delivery row does.
    const sql = insert
      ? {
          text: 'INSERT INTO bench_webhook_floor (id, at, body) VALUES ($1, $2, $3) RETURNING 1 AS one',
          values: [id, Date.now(), JSON.stringify(req.body)],
        }
      : { text: 'select 1 as one', values: [] };
    const [{ rows }] = await Promise.all([pool.query(sql), redis.incr('bench:webhook-floor')]);
    await queue.add('floor', { id, ok: rows[0].one === 1 }, { jobId: id, removeOnComplete: true });
    res.status(202).json({ accepted: true, deliveryId: id });
  });
} else {
  app.post('/', express.json({ limit: 64_000, strict: false }), (_req, res) => {
    res.status(202).json({ accepted: true });
  });
}
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(port, '127.0.0.1');
process.stdout.write('ready\n');
