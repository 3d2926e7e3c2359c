import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import compression from 'compression';
import express, { Router } from 'express';
import type { Logger } from '../src/logger.js';
import { sendError } from './middleware/errors.js';
import { NotFound, Unavailable } from '../src/errors.js';

/** Where the dashboard's single-page app is served; its JSON routes are under `${DASHBOARD_PATH}/api/`. */
export const DASHBOARD_PATH = '/dashboard';

/** The web client as scripts/build-web.mjs builds it (Vite, from web/). */
export const WEB_DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'dist');

/**
 * Every dashboard page's policy: the app's own scripts, styles and API only; images from itself or data:
 * (the TOTP QR code); no plugin, no base, forms post only here, and no site may frame it.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const YEAR_SECONDS = 365 * 24 * 3600;

/**
 * The dashboard's pages: hashed assets under /dashboard/assets/ (cached a year, immutable: a new build has
 * new names), and index.html for every other /dashboard/… path the app routes itself (never cached, so a
 * deploy is picked up at the next load). /dashboard/api/… is not this router's: it passes those on to the
 * dashboard's route table, mounted before or after it.
 */
export function dashboardWebRouter(logger: Logger, dist = WEB_DIST): Router {
  const router = Router();
  let index: Buffer | null = null;
  let warned = false;
  const page = (): Buffer | null => {
    if (index) return index;
    const file = path.join(dist, 'index.html');
    if (existsSync(file)) index = readFileSync(file);
    else if (!warned) {
      warned = true;
      logger.warn({ dist }, 'the dashboard is not built (node scripts/build-web.mjs builds it; npm start does it first)');
    }
    return index;
  };

  router.use((req, res, next) => {
    if (req.path === '/api' || req.path.startsWith('/api/')) return next('router');
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
    next();
  });
  router.use(
    '/assets',
    // Scripts and styles compressed for the browsers that take it (Brotli, else gzip): the first screen's script is
    // about 270 KB as built and about 80 KB gzipped. Only the hashed assets: each is cached a year, so a browser
    // asks once per build; the JSON routes and the page are left as they were.
    compression({ brotli: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } } }),
    express.static(path.join(dist, 'assets'), {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      etag: false,
      lastModified: false,
      setHeaders: (res) => res.setHeader('Cache-Control', `public, max-age=${YEAR_SECONDS}, immutable`),
    }),
    // An asset name that is not there (an old build's, a typo) is a 404, never the page.
    (_req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      sendError(res, new NotFound());
    },
  );
  router.get('/{*rest}', (_req, res) => {
    const html = page();
    res.setHeader('Cache-Control', 'no-store');
    if (!html) return sendError(res, new Unavailable(30));
    res.status(200).type('html').send(html);
  });
  return router;
}
