import type { Request, RequestHandler, Response } from 'express';
import { metrics } from '../../src/metrics/registry.js';
import { BULL_BOARD_PATH } from '../bull-board.js';
import { UNSUBSCRIBE_PATH } from '../unsubscribe.js';
import { LINK_PATH } from '../../src/measurement/links.js';

type Door = 'one_click' | 'link' | 'inbound_url';

/** The public doors by route template; their outcome is read from the status. */
const DOORS = new Map<string, Door>([
  [`${UNSUBSCRIBE_PATH}/{token}`, 'one_click'],
  [`${LINK_PATH}/{code}`, 'link'],
  ['/api/mail/inbound/{secret}', 'inbound_url'],
]);

/** The status a response the client gave up on before it ended is counted and logged with (nginx's). */
export const ABORTED = 499;

export function doorOutcome(status: number): string {
  if (status < 400) return 'served';
  if (status === ABORTED) return 'aborted';
  if (status === 404) return 'not_found';
  if (status === 429) return 'limited';
  if (status >= 500) return status === 503 ? 'unavailable' : 'error';
  return 'refused';
}

/**
 * One route template's request-duration series: a recorder per method and status, bound on first use and
 * kept, so a request costs two map lookups and a few additions (no label string built, no label hash).
 * The router makes one per route of its table at start-up; fixedRoute's templates have theirs below.
 */
export class RouteSeries {
  private readonly byMethod = new Map<string, Map<number, (seconds: number) => void>>();
  private readonly door: Door | undefined;

  constructor(readonly template: string) {
    this.door = DOORS.get(template);
  }

  record(method: string, status: number, seconds: number): void {
    let byStatus = this.byMethod.get(method);
    if (!byStatus) this.byMethod.set(method, (byStatus = new Map()));
    let recorder = byStatus.get(status);
    if (!recorder) {
      recorder = metrics.httpDuration.bind({ method, route: this.template, status: String(status) });
      byStatus.set(status, recorder);
    }
    recorder(seconds);
    if (this.door) metrics.publicDoor.inc({ door: this.door, outcome: doorOutcome(status) });
  }
}

const SERIES = Symbol('route series');
const STARTED = Symbol('metrics started');
type Marked = Response & { [SERIES]?: RouteSeries; [STARTED]: number };

/** The route table's series of the request this response answers (set by the router when a route matched). */
export function markRoute(res: Response, series: RouteSeries): void {
  (res as Marked)[SERIES] = series;
}

const FIXED = new Map(
  ['/healthz', '/openapi.json', `${UNSUBSCRIBE_PATH}/{token}`, `${LINK_PATH}/{code}`, BULL_BOARD_PATH, 'unmatched'].map((t) => [
    t,
    new RouteSeries(t),
  ]),
);

/** A template for what the route table does not serve; anything else is `unmatched` (never the raw path). */
function fixedRoute(req: Request): string {
  // The path as asked: a mounted router (the doors) strips its mount path from req.url while it answers.
  const url = req.originalUrl ?? req.url;
  const q = url.indexOf('?');
  // Routing ignores case (`/U/<token>` reaches the one-click door), so this does too.
  const path = (q === -1 ? url : url.slice(0, q)).toLowerCase();
  if (path === '/healthz' || path === '/openapi.json') return path;
  const first = `/${path.split('/')[1] ?? ''}`;
  if (first === UNSUBSCRIBE_PATH) return `${UNSUBSCRIBE_PATH}/{token}`;
  if (first === LINK_PATH) return `${LINK_PATH}/{code}`;
  if (path === BULL_BOARD_PATH || path.startsWith(`${BULL_BOARD_PATH}/`)) return BULL_BOARD_PATH;
  return 'unmatched';
}

const seriesOf = (req: Request, res: Response): RouteSeries => (res as Marked)[SERIES] ?? FIXED.get(fixedRoute(req))!;

/** The route template of the request `res` answers: the route table's, else fixedRoute's. */
export const routeOf = (req: Request, res: Response): string => seriesOf(req, res).template;

/** One listener for every response (`this` is the response), so a request makes no closure for its timing. */
function recordClose(this: Marked): void {
  const req = this.req;
  const status = this.writableFinished ? this.statusCode : ABORTED;
  seriesOf(req, this).record(req.method, status, (performance.now() - this[STARTED]) / 1000);
}

/**
 * Times every request into `gas_http_request_duration_seconds` {method, route, status}, and counts the
 * public doors' requests by outcome; a response the client gave up on before it ended counts as 499
 * (outcome `aborted`), not as the status it had been given. Mounted only when METRICS_PORT is set.
 */
export function httpMetrics(): RequestHandler {
  return (_req, res, next) => {
    (res as Marked)[STARTED] = performance.now();
    res.on('close', recordClose);
    next();
  };
}
