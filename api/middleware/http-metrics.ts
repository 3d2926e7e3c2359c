import type { Request, RequestHandler, Response } from 'express';
import { metrics } from '../../src/metrics/registry.js';
import { BULL_BOARD_PATH } from '../bull-board.js';
import { UNSUBSCRIBE_PATH } from '../unsubscribe.js';
import { LINK_PATH } from '../../src/measurement/links.js';

const ROUTE = Symbol('route template');
type Marked = Response & { [ROUTE]?: string };

/** The route table's template of the request this response answers (set by the router when a route matched). */
export function markRoute(res: Response, template: string): void {
  (res as Marked)[ROUTE] = template;
}

/** The public doors by route template; their outcome is read from the status. */
const DOORS = new Map<string, 'one_click' | 'link' | 'inbound_url'>([
  [`${UNSUBSCRIBE_PATH}/{token}`, 'one_click'],
  [`${LINK_PATH}/{code}`, 'link'],
  ['/api/mail/inbound/{secret}', 'inbound_url'],
]);

/** The route template of the request `res` answers: the route table's, else fixedRoute's. */
export const routeOf = (req: Request, res: Response): string => (res as Marked)[ROUTE] ?? fixedRoute(req);

/** A template for what the route table does not serve; anything else is `unmatched` (never the raw path). */
function fixedRoute(req: Request): string {
  // The path as asked: a mounted router (the doors) strips its mount path from req.url while it answers.
  const url = req.originalUrl ?? req.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path === '/healthz' || path === '/openapi.json') return path;
  const first = `/${path.split('/')[1] ?? ''}`;
  if (first === UNSUBSCRIBE_PATH) return `${UNSUBSCRIBE_PATH}/{token}`;
  if (first === LINK_PATH) return `${LINK_PATH}/{code}`;
  if (path === BULL_BOARD_PATH || path.startsWith(`${BULL_BOARD_PATH}/`)) return BULL_BOARD_PATH;
  return 'unmatched';
}

export function doorOutcome(status: number): string {
  if (status < 400) return 'served';
  if (status === 404) return 'not_found';
  if (status === 429) return 'limited';
  if (status >= 500) return status === 503 ? 'unavailable' : 'error';
  return 'refused';
}

/**
 * Times every request into `gas_http_request_duration_seconds` {method, route, status}, and counts the
 * public doors' requests by outcome. Mounted only when METRICS_PORT is set. The label children are
 * kept by key, so a request costs one map lookup and one observe.
 */
export function httpMetrics(): RequestHandler {
  const children = new Map<string, { observe(v: number): void }>();
  return (req, res, next) => {
    const started = performance.now();
    res.once('close', () => {
      const route = routeOf(req, res);
      const status = res.statusCode;
      const key = `${req.method} ${route} ${status}`;
      let child = children.get(key);
      if (!child) {
        child = metrics.httpDuration.labels({ method: req.method, route, status: String(status) });
        children.set(key, child);
      }
      child.observe((performance.now() - started) / 1000);
      const door = DOORS.get(route);
      if (door) metrics.publicDoor.inc({ door, outcome: doorOutcome(status) });
    });
    next();
  };
}
