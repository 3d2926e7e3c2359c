import { defineRoute, type RouteDef } from './route.js';
import { getMe } from './routes/me.js';
import { MeResponse } from './routes/me.schemas.js';

/**
 * The route table: each route's method, path, scope, rate bucket, schemas and handler, declared once.
 * The router, the scope check, the limiter and /openapi.json all read it.
 *
 * Buckets: GETs count as `reads`, other verbs as `writes`, POST /agent/messages as `messages`;
 * every request also counts toward the account bucket.
 */
export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/me',
    summary: 'The calling token, its account and its rate limits',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The token', schema: MeResponse } },
    handler: getMe,
  }),
];
