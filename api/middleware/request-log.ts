import { randomUUID } from 'node:crypto';
import type { Express, Request, RequestHandler } from 'express';
import { redactUrl, type Logger } from '../../src/logger.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const CHILD = Symbol('request logger');

type WithChild = Request & { [CHILD]?: Logger };

const entry = (req: Request) => ({ id: req.id, method: req.method, url: redactUrl(req.originalUrl ?? req.url) });

/**
 * Gives each request an id (the client's `X-Request-Id` when it is safe, else a UUID), echoes it, and
 * writes one JSON line when the response ends — pino-http's line (`req` {id, method, url}, `res`
 * {statusCode}, `responseTime`), without its per-request child logger: `req.log` is made only when
 * something logs through it (a getter on the app's request prototype, so requests keep one shape).
 * Only what is safe is logged: no headers, hook tokens cut out of URLs.
 */
export function requestLog(app: Express, logger: Logger): RequestHandler {
  // The request line's fields are all built here, its URL already redacted by entry(): it skips the
  // logger's path redaction, which cloned each line and redacted the URL a second time (an eighth of a
  // 304's CPU, measured). Everything else a request logs goes through `req.log`, which is redacted.
  const lines = logger.child({}, { redact: { paths: [] } });
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: WithChild) {
      return (this[CHILD] ??= logger.child({ req: entry(this) }));
    },
  });
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    const started = performance.now();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.once('close', () => {
      const line = { req: entry(req), res: { statusCode: res.statusCode }, responseTime: Math.round(performance.now() - started) };
      if (!res.writableFinished) lines.warn(line, 'request aborted');
      else if (res.statusCode >= 500) lines.error(line, 'request completed');
      else lines.info(line, 'request completed');
    });
    next();
  };
}

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    /** This request's logger, bound to its id; made on first use. */
    log: Logger;
  }
}
