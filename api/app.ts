import express, { type Express } from 'express';
import { boardLoginGuard } from '../src/admin/board-login.js';
import { unreachableStores } from '../src/deps.js';
import { BULL_BOARD_PATH, basicAuth, bullBoardRouter } from './bull-board.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { requestLog } from './middleware/request-log.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { httpTracing } from './middleware/tracing.js';
import { tracingOn } from '../src/tracing/spans.js';
import { buildOpenApi } from './openapi.js';
import type { AppDeps, ProcessDeps, RouteDef } from './route-def.js';
import { exposeExperimentMail, sendWindowHold } from '../src/experiments/variants/send-window.js';
import { experimentAdapter } from '../src/experiments/experiment.adapter.js';
import { registerAdapter } from '../src/channels/registry.js';
import { buildRouter } from './router.js';
import { dashboardTable } from './dashboard/index.js';
import { turnReading } from '../src/agent/core/doors.js';
import { routes as defaultRoutes } from './routes/index.js';
import { UNSUBSCRIBE_PATH, unsubscribeRouter } from './unsubscribe.js';
import { linksRouter } from './links.js';
import { LINK_PATH } from '../src/measurement/links.js';
import { Unavailable } from '../src/errors.js';
import { DASHBOARD_PATH, dashboardWebRouter } from './dashboard-web.js';

/** The Express app, without listening: tests and the server entry both build it here. */
export function createApp(processDeps: ProcessDeps, routes: RouteDef[] = defaultRoutes): Express {
  // The composition root of the API: the shipping path is handed the experiments' send-window hold rule, and the
  // channel registry the experiments' adapter (starting an experiment is a kind of work); review reads a card's turn
  // through the agent's door.
  registerAdapter('experiment', experimentAdapter);
  const deps: AppDeps = { ...processDeps, holdRule: sendWindowHold, onSent: exposeExperimentMail, readTurn: turnReading };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', false);

  // Tracing on: each request runs in its server span, and its request id is the trace id.
  const traced = tracingOn();
  if (traced) app.use(httpTracing());
  if (deps.config.metrics.port !== null) app.use(httpMetrics());
  app.use(requestLog(app, deps.logger, { traceIds: traced }));

  app.get('/healthz', async (_req, res) => {
    const failed = await unreachableStores(deps);
    if (!failed.length) {
      res.setHeader('Cache-Control', 'no-store');
      res.json({ ok: true });
      return;
    }
    const err = new Unavailable(5);
    res.status(503).setHeader('Cache-Control', 'no-store').setHeader('Retry-After', '5');
    res.json({ ...err.body(), ok: false, failed });
  });

  const openapi = buildOpenApi(routes, deps.config.baseUrl);
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });

  // Without ADMIN_USER/ADMIN_PASSWORD the board is not mounted at all (the server logs why).
  // Read-only unless ADMIN_READ_ONLY=false; wrong logins limited per address across API processes.
  const admin = deps.config.admin;
  if (admin) {
    const guard = boardLoginGuard(deps.redis, deps.config.queuePrefix, admin);
    app.use(BULL_BOARD_PATH, basicAuth(admin, guard, deps.logger), ...bullBoardRouter(deps.queues, admin));
  }

  // One-click unsubscribe links in sent mail: HTML pages, no login, outside /api and its limiter.
  app.use(UNSUBSCRIBE_PATH, unsubscribeRouter(deps));
  // Tracked links in sent mail and published posts: redirects, no login, outside /api and its limiter.
  app.use(LINK_PATH, linksRouter(deps));

  // The dashboard's single-page app (web/, built into web/dist); its JSON routes under /dashboard/api/ pass through.
  app.use(DASHBOARD_PATH, dashboardWebRouter(deps.logger));
  // Nothing else answers at the root: a person who types the bare address lands on the dashboard.
  app.get('/', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, `${DASHBOARD_PATH}/`);
  });

  const noStore: express.RequestHandler = (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
  app.use('/api', noStore);
  app.use('/dashboard/api', noStore);
  app.use(buildRouter(routes, deps));
  // The dashboard's JSON routes and the /api/v1 table again under /dashboard/api/v1: cookie sessions, CSRF, never a bearer token.
  app.use(buildRouter(dashboardTable(routes), deps, 'dashboard'));
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
