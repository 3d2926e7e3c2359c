import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import http from 'node:http';
import { describe, expect } from 'vitest';
import { DASHBOARD_CSP, WEB_DIST } from '../../api/dashboard-web.js';
import { serveApp } from '../helpers/browser.js';
import { it } from '../helpers/fixture.js';

/**
 * The dashboard's single-page app as the service serves it (web/dist, built by scripts/build-web.mjs): the
 * page never cached and under the strict CSP, hashed assets cached a year, index.html for every page path
 * the app routes itself, and a first screen small enough for a slow phone.
 */

const index = () => readFileSync(path.join(WEB_DIST, 'index.html'), 'utf8');
const assetPaths = () => [...index().matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);

describe('the dashboard page', () => {
  it('answers index.html for the root and every page path, no-store, under the strict CSP that no site may frame', async ({ api }) => {
    for (const p of [
      '/dashboard/',
      '/dashboard',
      '/dashboard/sign-in',
      '/dashboard/settings/tokens',
      '/dashboard/reset/abc123',
      '/dashboard/invite/x',
    ]) {
      const res = await api().get(p).expect(200);
      expect(res.headers['content-type'], p).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], p).toBe('no-store');
      expect(res.headers['content-security-policy'], p).toBe(DASHBOARD_CSP);
      expect(res.headers['x-frame-options'], p).toBe('DENY');
      expect(res.headers['x-content-type-options'], p).toBe('nosniff');
      expect(res.text).toContain('<div id="root"></div>');
    }
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
    expect(DASHBOARD_CSP).toContain("script-src 'self';");
  });

  it('serves hashed assets cached a year and immutable; an unknown asset is a JSON 404, never the page', async ({ api }) => {
    const assets = assetPaths();
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const a of assets) {
      expect(a).toMatch(/-[\w-]{8,}\.(js|css)$/);
      const res = await api().get(a).expect(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const missing = await api().get('/dashboard/assets/index-00000000.js').expect(404);
    expect(missing.body).toEqual({ error: 'not found' });
    expect(missing.headers['cache-control']).toBe('no-store');
  });

  it('sends the assets compressed to a browser that takes it (Brotli first, else gzip), as they are to one that does not', async ({
    env,
  }) => {
    const script = assetPaths().find((a) => a.endsWith('.js'))!;
    const raw = readFileSync(path.join(WEB_DIST, script.replace('/dashboard/', '')));
    const served = await serveApp(env.app);
    // Node's own client, which leaves the body as it came (fetch and supertest undo the encoding).
    const asked = (encoding: string) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(`${served.base}${script}`, { headers: { 'accept-encoding': encoding } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
    try {
      const br = await asked('gzip, deflate, br, zstd');
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toMatch(/Accept-Encoding/i);
      expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(brotliDecompressSync(br.body).equals(raw)).toBe(true);
      expect(br.body.length).toBeLessThan(raw.length / 3);
      const gz = await asked('gzip');
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).equals(raw)).toBe(true);
      const plain = await asked('identity');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.equals(raw)).toBe(true);
    } finally {
      await served.close();
    }
  });

  it('leaves /dashboard/api/ to the dashboard routes: an unknown one is the JSON 404, not the page', async ({ api }) => {
    const res = await api().get('/dashboard/api/no-such-route').expect(404);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(res.text).not.toContain('<div id="root">');
  });

  it('sends the bare address to the dashboard', async ({ api }) => {
    const res = await api().get('/').expect(302);
    expect(res.headers.location).toBe('/dashboard/');
  });

  it('has no inline script or style and names no other host; its first screen is at most 200 KB compressed', () => {
    const html = index();
    for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/ src="\/dashboard\/assets\//);
    expect(html).not.toMatch(/<style|style="/);
    expect(html).not.toMatch(/https?:\/\//);
    let compressed = 0;
    for (const a of assetPaths()) {
      const body = readFileSync(path.join(WEB_DIST, a.replace('/dashboard/', '')));
      compressed += gzipSync(body, { level: 9 }).length;
      // Built code names no other host to load from (React's error pages link to react.dev in text only).
      expect(body.toString('utf8')).not.toMatch(/(?:src|href)=["']https?:/);
      // React's production build: the development one (whatever NODE_ENV the builder ran under) is four times the size.
      expect(body.toString('utf8')).not.toContain('Download the React DevTools');
    }
    expect(compressed).toBeLessThanOrEqual(200 * 1024);
    // Nothing but what the page loads, or a chunk a loaded script loads later (React.lazy: a page's chunk, and the
    // Results page's chart chunk from it): no stray files a build left behind.
    const files = readdirSync(path.join(WEB_DIST, 'assets'));
    const reached = new Set(assetPaths().map((a) => a.replace('/dashboard/assets/', '')));
    for (let grew = true; grew; ) {
      grew = false;
      const text = [...reached]
        .filter((f) => f.endsWith('.js'))
        .map((f) => readFileSync(path.join(WEB_DIST, 'assets', f), 'utf8'))
        .join('\n');
      for (const f of files.filter((f) => !reached.has(f) && text.includes(f))) grew = !!reached.add(f);
    }
    expect(files.filter((f) => !reached.has(f))).toEqual([]);
    // The chart library (uPlot) is not on the first screen: only the Results page's chart chunk holds it.
    expect(assetPaths().filter((a) => a.includes('SeriesChart'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('SeriesChart')).length).toBeGreaterThan(0);
  });
});
