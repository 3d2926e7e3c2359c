/**
 * Baselines for the Content API and Measurement benchmark (issue 17), bare Express 5:
 * - `etag PORT ETAG`: GET /p/:slug answers 304 when If-None-Match is ETAG (with the service's cache
 *   headers), else 200 with a small JSON body.
 * - `redirect PORT URL`: GET /l/:code answers 302 to URL with a visit id appended, no-store.
 * Usage: content-baselines.ts etag|redirect PORT ARG
 */
import { randomUUID } from 'node:crypto';
import express from 'express';

const [kind, portArg, arg = ''] = process.argv.slice(2);
const app = express();
app.disable('x-powered-by');
app.disable('etag');
if (kind === 'etag') {
  app.get('/p/:slug', (req, res) => {
    res.setHeader('Cache-Control', 'private, max-age=60, stale-while-revalidate=600');
    res.setHeader('Vary', 'Authorization');
    res.setHeader('ETag', arg);
    if (req.headers['if-none-match'] === arg) res.status(304).end();
    else res.json({ post: { slug: req.params.slug } });
  });
} else {
  app.get('/l/:code', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, `${arg}${arg.includes('?') ? '&' : '?'}gvid=vis_${randomUUID()}`);
  });
}
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(portArg), '127.0.0.1');
process.stdout.write('ready\n');
