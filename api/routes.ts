import type { RouteDef } from './route.js';
import { agentRoutes } from './routes/agent.js';
import { blocklistRoutes } from './routes/blocklist.js';
import { contentRoutes } from './routes/content.js';
import { leadsRoutes } from './routes/leads.js';
import { mailInboundRoutes } from './routes/mail-inbound.js';
import { measurementRoutes } from './routes/measurement.js';
import { meRoutes } from './routes/me.js';
import { resultsRoutes } from './routes/results.js';
import { reviewRoutes } from './routes/review.js';
import { webhookRoutes } from './routes/webhook.js';
import { workflowsRoutes } from './routes/workflows.js';

/**
 * The route table: each area declares its routes (method, path, scope, rate bucket, schemas and a
 * handler typed from them) in api/routes/<area>.ts; this only puts them in order (the order of
 * /openapi.json). The router, the scope check, the limiter and /openapi.json all read it.
 *
 * Buckets: GETs count as `reads`, other verbs as `writes`, POST /agent/messages as `messages`;
 * every request also counts toward the account bucket.
 */
export const routes: RouteDef[] = [
  ...meRoutes,
  ...reviewRoutes,
  ...leadsRoutes,
  ...blocklistRoutes,
  ...resultsRoutes,
  ...agentRoutes,
  ...webhookRoutes,
  ...workflowsRoutes,
  ...mailInboundRoutes,
  ...contentRoutes,
  ...measurementRoutes,
];
