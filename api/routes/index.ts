import type { RouteDef } from '../route-def.js';
import { agentRoutes } from './agent.js';
import { blocklistRoutes } from './blocklist.js';
import { contentRoutes } from './content.js';
import { leadsRoutes } from './leads.js';
import { mailInboundRoutes } from './mail-inbound.js';
import { measurementRoutes } from './measurement.js';
import { meRoutes } from './me.js';
import { resultsRoutes } from './results.js';
import { reviewRoutes } from './review.js';
import { webhookRoutes } from './webhook.js';
import { workflowsRoutes } from './workflows.js';

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
