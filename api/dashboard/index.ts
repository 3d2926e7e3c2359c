import type { RouteDef } from '../route-def.js';
import { agentRoutes } from './agent.js';
import { hookRoutes } from './hooks.js';
import { leadImportRoutes } from './leads-imports.js';
import { leadRoutes } from './leads.js';
import { peopleRoutes } from './people.js';
import { resultsSeriesRoutes } from './results.js';
import { reviewStreamRoutes } from './review-stream.js';
import { sessionRoutes } from './session.js';
import { settingsRoutes } from './settings.js';
import { tokenRoutes } from './tokens.js';
import { workflowRoutes } from './workflows.js';

/**
 * The dashboard's route table (docs/dashboard.md): each area declares its routes in api/dashboard/<area>.ts
 * with the same `defineRoute` form as /api/v1, `auth: 'session'` (the cookie) or `auth: 'none'` (ways in),
 * and `role: 'owner'` for what only owners do. Mounted at /dashboard/api by the session router, which never
 * takes a bearer token and checks CSRF on every non-GET.
 */
export const dashboardRoutes: RouteDef[] = [
  ...sessionRoutes,
  ...peopleRoutes,
  ...tokenRoutes,
  ...hookRoutes,
  ...settingsRoutes,
  ...leadImportRoutes,
  ...leadRoutes,
  ...reviewStreamRoutes,
  ...agentRoutes,
  ...workflowRoutes,
  ...resultsSeriesRoutes,
];

/**
 * The whole dashboard table: its own routes, then every /api/v1 route that a caller authenticates for
 * (not the public doors) again under /dashboard/api/v1 with session auth, so the dashboard's pages use the
 * API's own handlers, schemas and errors. A person acts with every scope; their writes are audited as them.
 */
export function dashboardTable(apiRoutes: RouteDef[], own: RouteDef[] = dashboardRoutes): RouteDef[] {
  const mirrored = apiRoutes
    .filter((r) => r.auth !== 'none' && r.path.startsWith('/api/'))
    .map((r): RouteDef => ({ ...r, path: `/dashboard${r.path}`, auth: 'session' }));
  return [...own, ...mirrored];
}
