/**
 * Baselines for the Content API and Measurement benchmark, bare Express 5:
 * - `etag PORT ETAG`: GET /p/:slug answers 304 when If-None-Match is ETAG (with the service's cache
 *   headers), else 200 with a small JSON body.
 * - `etag-redis PORT ETAG REDIS_URL`: the same after one Redis call (INCR) per request: the floor of any
 *   request that asks Redis anything, as the service's limiter does on every authenticated call.
 * - `redirect PORT URL`: GET /l/:code answers 302 to URL with a visit id appended, no-store.
 * - `redirect-insert PORT URL DATABASE_URL ACCOUNT`: the same after one committed INSERT of the visit row
 *   into the service's `visits` table per request: the floor of a redirect that keeps its visit.
 * Usage: content-baselines.ts etag|etag-redis|redirect|redirect-insert PORT ARG [STORE_URL [ACCOUNT]]
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import pg from 'pg';

const [kind, portArg, arg = '', storeUrl = '', accountId = ''] = process.argv.slice(2);
const app = express();
app.disable('x-powered-by');
app.disable('etag');
if (kind === 'etag' || kind === 'etag-redis') {
  const redis = kind === 'etag-redis' ? new Redis(storeUrl) : null;
  app.get('/p/:slug', async (req, res) => {
    if (redis) await redis.incr('bench:content-baseline');
    res.setHeader('Cache-Control', 'private, max-age=60, stale-while-revalidate=600');
    res.setHeader('Vary', 'Authorization');
    res.setHeader('ETag', arg);
    if (req.headers['if-none-match'] === arg) res.status(304).end();
    else res.json({ post: { slug: req.params.slug } });
  });
} else {
  const pool = kind === 'redirect-insert' ? new pg.Pool({ connectionString: storeUrl, max: 10 }) : null;
  app.get('/l/:code', async (req, res) => {
    const visitId = `vis_${randomUUID()}`;
    if (pool)
      await pool.query(
        `INSERT INTO visits (id, account_id, channel, via, link_code, url, ua_hash, bot, at)
         VALUES ($1, $2, 'email', 'link', $3, $4, $5, false, $6)`,
        [visitId, accountId, req.params.code, arg, String(req.headers['user-agent'] ?? '').slice(0, 64), Date.now()],
      );
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, `${arg}${arg.includes('?') ? '&' : '?'}gvid=${visitId}`);
  });
}
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(portArg), '127.0.0.1');
process.stdout.write('ready\n');
