/**
 * Baseline servers measured in the same run as the service: `http` (bare node:http), `express` (bare
 * Express 5 hello-world), `express-pg-redis` (Express doing one Postgres query and one Redis call per
 * request: the floor for an authenticated, rate-limited read), `express-page-redis ACCOUNT` (the same, but the
 * query is the review-queue page of GET /review for ACCOUNT, each card's JSON rendered by Postgres as that
 * route has it, joined into the page and sent: the floor for that route's own work), `express-bytes-redis FILE`
 * (Express making one Redis call and sending the bytes of FILE, the very page GET /review answers, read once at start:
 * the floor for a read served from memory).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import express from 'express';
import pg from 'pg';
import { Redis } from 'ioredis';
import { PRIORITY_ORDER_SQL } from '../../src/review/cards/card-shape.js';
import { QUEUE_CARD_JSON } from '../../src/review/cards/cards.repository.js';

const [kind, portArg, databaseUrl, redisUrl, accountId] = process.argv.slice(2);
const port = Number(portArg);
const body = JSON.stringify({ ok: true });

if (kind === 'http') {
  createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(body);
  }).listen(port, '127.0.0.1');
} else {
  const app = express();
  app.disable('x-powered-by');
  if (kind === 'express-pg-redis') {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    const redis = new Redis(redisUrl ?? 'redis://127.0.0.1:6379');
    app.get('/', async (_req, res) => {
      const [{ rows }] = await Promise.all([pool.query('select 1 as one'), redis.incr('bench:baseline')]);
      res.json({ ok: rows[0].one === 1 });
    });
  } else if (kind === 'express-page-redis') {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    const redis = new Redis(redisUrl ?? 'redis://127.0.0.1:6379');
    const page = {
      name: 'page',
      text:
        `SELECT ${QUEUE_CARD_JSON} AS json FROM review_cards r WHERE account_id = $1 AND (status = ANY($2) OR (status = ` +
        `'snoozed' AND snoozed_until <= $3)) ` +
        `ORDER BY ${PRIORITY_ORDER_SQL} ASC, created_at DESC, id DESC LIMIT $4`,
    };
    app.get('/', async (_req, res) => {
      const [{ rows }] = await Promise.all([
        pool.query({ ...page, values: [accountId, ['pending', 'needs_revision'], Date.now(), 50] }),
        redis.incr('bench:baseline'),
      ]);
      res.type('application/json').send(`{"items":[${rows.map((r: { json: string }) => r.json).join(',')}]}`);
    });
  } else if (kind === 'express-bytes-redis') {
    // Its arguments are FILE then the Redis URL; no ETag computed per request, as in the service.
    const bytes = readFileSync(process.argv[4]!);
    app.disable('etag');
    const redis = new Redis(redisUrl ?? 'redis://127.0.0.1:6379');
    app.get('/', async (_req, res) => {
      await redis.incr('bench:baseline');
      res.type('application/json').send(bytes);
    });
  } else {
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
  }
  app.listen(port, '127.0.0.1');
}
process.stdout.write('ready\n');
