import { randomUUID } from 'node:crypto';
import type { Express, Request, RequestHandler, Response } from 'express';
import { prebuiltLine, type Logger } from '../../src/logger.js';
import { activeTraceId } from '../../src/tracing/spans.js';
import { ABORTED, routeOf } from './http-metrics.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const CHILD = Symbol('request logger');

type WithChild = Request & { [CHILD]?: Logger };

/** The route template the request reached (`/api/webhook/hook/{hookToken}`, `unmatched`): never the path as sent. */
const routeOfRequest = (req: Request): string => (req.res ? routeOf(req, req.res) : 'unmatched');
const entry = (req: Request) => ({ id: req.id, method: req.method, route: routeOfRequest(req) });

const STARTED = Symbol('request started');

type Timed = Response & { [STARTED]: number };

/** The client's `X-Request-Id` when it is safe, else a UUID. */
function givenOrNew(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Gives each request an id (the client's `X-Request-Id` when it is safe, else a UUID; with `traceIds`, the
 * trace id of the request's span, docs/decisions/tracing.md), echoes it, and
 * writes one JSON line when the response ends — pino-http's line (`req` {id, method, route}, `res`
 * {statusCode}, `responseTime`), without its per-request child logger: `req.log` is made only when
 * something logs through it (a getter on the app's request prototype, so requests keep one shape).
 * Only what is safe is logged: no headers, and no path as sent — the route template it reached (the
 * route table's, a door's, or `unmatched`), so no token, secret or link code in any spelling of a URL
 * reaches the log (docs/decisions/access-log.md). A response the client gave up on before it ended is
 * logged as 499.
 */
export function requestLog(app: Express, logger: Logger, opts: { traceIds?: boolean } = {}): RequestHandler {
  // The request line is written by hand (prebuiltLine): its level, time, bindings and message are framed
  // once, its fields pasted in as JSON, with no object for pino to walk and no redaction pass — each field is
  // safe as built here: the id matched REQUEST_ID or is a UUID, the method passed Node's parser, the route is
  // one of our templates and JSON-quoted, the rest are numbers. Everything else a request logs goes through `req.log`,
  // which is redacted.
  const completed = prebuiltLine(logger, 'info', 'request completed');
  const failed = prebuiltLine(logger, 'error', 'request completed');
  const aborted = prebuiltLine(logger, 'warn', 'request aborted');
  // One listener for every response (`this` is the response), so a request makes no closure for its line.
  function line(this: Timed): void {
    const req = this.req;
    const done = this.writableFinished;
    const status = done ? this.statusCode : ABORTED;
    const fields =
      `"req":{"id":"${req.id}","method":"${req.method}","route":${JSON.stringify(routeOf(req, this))}},` +
      `"res":{"statusCode":${status}},"responseTime":${Math.round(performance.now() - this[STARTED])}`;
    if (!done) aborted(fields);
    else if (status >= 500) failed(fields);
    else completed(fields);
  }
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: WithChild) {
      return (this[CHILD] ??= logger.child({ req: entry(this) }));
    },
  });
  return (req, res, next) => {
    const id = (opts.traceIds && activeTraceId()) || givenOrNew(req.headers['x-request-id']);
    (res as Timed)[STARTED] = performance.now();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.on('close', line);
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
