import { timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { RequestHandler, Response, Router } from 'express';
import type { BoardLoginGuard } from '../src/admin/board-login.js';
import { clientNetwork } from '../src/rate-limit.js';
import type { Config } from '../src/config.js';
import { BoardReadOnly, RateLimited, Unavailable } from '../src/errors.js';
import type { QueueSet } from '../src/jobs/registry.js';
import type { Logger } from '../src/logger.js';
import { sendError } from './middleware/errors.js';

export const BULL_BOARD_PATH = '/admin/queues';

type Admin = NonNullable<Config['admin']>;

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function credentials(header: string | undefined): { user: string; password: string } | 'malformed' | null {
  if (!header) return null;
  const [scheme, encoded] = header.split(' ');
  if (scheme !== 'Basic' || !encoded) return 'malformed';
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? 'malformed' : { user: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

/**
 * HTTP basic auth for the operators' board. Wrong logins are counted per address (`guard`, in Redis):
 * after `maxFailures` in a window every request from that address answers 429 with `Retry-After`,
 * even with the right password, so guessing cannot go on. A wrong login is counted before it is
 * answered and the right one looks at the count after the credentials were compared, so a burst of
 * guesses sent at once is counted as it arrives, not let through on a count read before any of them.
 * A request without credentials (a browser's first, before it asks the person) is not a failure.
 * Logs say who failed, never what was typed, and stop at the limit (a flood writes no more lines).
 */
export function basicAuth(admin: Admin, guard: BoardLoginGuard, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    const address = clientNetwork(req.ip);
    const given = credentials(req.headers.authorization);
    const pair = given && given !== 'malformed' ? given : null;
    const userKnown = pair !== null && safeEqual(pair.user, admin.user);
    // Both compared every time, so the time taken does not tell whether the user name was right.
    const passwordRight = pair !== null && safeEqual(pair.password, admin.password);
    const right = userKnown && passwordRight;
    try {
      if (right) {
        const wait = await guard.blockedFor(address);
        return wait > 0 ? sendError(res, new RateLimited(wait)) : next();
      }
      if (given) {
        const { failures, windowLeft } = await guard.failed(address);
        if (failures > admin.maxFailures) return sendError(res, new RateLimited(windowLeft));
        logger.warn({ address, userKnown, failures, maxFailures: admin.maxFailures }, 'bull board login refused');
        if (failures === admin.maxFailures)
          logger.warn({ address, retryAfter: windowLeft }, 'bull board logins from this address refused until the window ends');
      }
    } catch {
      // Without the counter there is no limit: refuse rather than let guessing run unlimited.
      return sendError(res, new Unavailable());
    }
    res.setHeader('WWW-Authenticate', 'Basic realm="growth-agent queues", charset="UTF-8"');
    res.setHeader('Cache-Control', 'no-store');
    res.status(401).json({ error: 'unauthorized' });
  };
}

/** ADMIN_READ_ONLY: only reads reach the board, so no retry, promote, clean, edit, delete or pause runs. */
export const readOnlyBoard: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  sendError(res, new BoardReadOnly());
};

/** Nothing on the page may load from another host (Bull Board's page links Google Fonts). */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const OUTSIDE = /^\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?\/\//i;

/** Drops every `<link>` and `<script>` whose address is absolute (another host): the page loads only from us. */
export function withoutOutsideHosts(html: string): string {
  return html
    .replace(/<link\b[^>]*>/gi, (tag) => (OUTSIDE.test(/\bhref\s*=\s*([^\s>]+)/i.exec(tag)?.[1] ?? '') ? '' : tag))
    .replace(/<script\b[^>]*>\s*<\/script>/gi, (tag) => (OUTSIDE.test(/\bsrc\s*=\s*([^\s>]+)/i.exec(tag)?.[1] ?? '') ? '' : tag));
}

const localOnly: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CSP);
  const render = res.render.bind(res);
  const renderLocal = (view: string, options?: object) =>
    render(view, options ?? {}, (err: Error | null, html?: string) => {
      if (err) return next(err);
      res.type('html').send(withoutOutsideHosts(html ?? ''));
    });
  res.render = renderLocal as Response['render'];
  next();
};

/** Bull Board over every queue, read from the same queue set the API produces to. */
export function bullBoardRouter(queues: QueueSet, opts: { readOnly: boolean }): RequestHandler[] {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: [...queues.values()].map((q) => new BullMQAdapter(q, { readOnlyMode: opts.readOnly, allowRetries: !opts.readOnly })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Growth Agent queues', hideDocsLink: true } },
  });
  const board = adapter.getRouter() as Router;
  return opts.readOnly ? [readOnlyBoard, localOnly, board] : [localOnly, board];
}
