/**
 * Baseline servers measured in the same run as the service: `http` (bare node:http), `express` (bare
 * Express 5 hello-world), `express-pg-redis` (Express doing one Postgres query and one Redis call per
 * request: the floor for an authenticated, rate-limited read).
 */
import { createServer } from 'node:http';
import express from 'express';
import pg from 'pg';
import { Redis } from 'ioredis';

const [kind, portArg, databaseUrl, redisUrl] = process.argv.slice(2);
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
  } else {
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
  }
  app.listen(port, '127.0.0.1');
}
process.stdout.write('ready\n');
