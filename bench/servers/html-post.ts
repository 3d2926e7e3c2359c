/**
 * Baseline for the one-click unsubscribe benchmark: bare Express 5 reading a form POST (urlencoded, 1 KB
 * limit, as the service does) and answering 200 with an HTML page of BYTES bytes, with the same headers.
 * Usage: html-post.ts PORT BYTES
 */
import express from 'express';

const [portArg, bytesArg] = process.argv.slice(2);
const page = `<!doctype html><html><body>${'x'.repeat(Math.max(0, Number(bytesArg) - 40))}</body></html>\n`;
const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.post('/u/:token', express.urlencoded({ extended: false, limit: 1024 }), (_req, res) => {
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.setHeader('Content-Security-Policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  res.send(page);
});
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(portArg), '127.0.0.1');
process.stdout.write('ready\n');
