import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { errorStatuses, type RouteDef } from './route-def.js';
import { ErrorBody } from './schemas.js';
import { DEFAULT_JSON_LIMIT, describeTextRule } from './request-rules.js';
import { SCOPE_DESCRIPTIONS } from '../src/tokens/tokens.types.js';

export const API_VERSION = '2026-09-29';

const errorMeaning: Record<number, string> = {
  400: 'The request is malformed (or not HTTP at all); `error` names the field and the rule',
  401: '`unauthorized`: token missing, malformed, unknown or revoked',
  403: '`forbidden`: the token lacks `requiredScope`',
  404: "`not found`: unknown id, or another account's",
  409: 'A settled refusal; do not retry',
  408: '`request was not sent in time`: headers not within HTTP_HEADERS_TIMEOUT_MS or the whole request not within HTTP_REQUEST_TIMEOUT_MS',
  413: 'Body too large (over 1 MiB unless the route says less)',
  415: 'The body is not of the media type the route takes',
  431: '`request headers are too large`: request line and headers over 16 KiB (16,384 bytes), refused before any route',
  429: '`rate limited`: wait `Retry-After` seconds',
  500: '`server misconfigured`',
  502: 'Recorded but not handed on; retry the same request',
  503: '`temporarily unavailable` (or a mail send not yet settled): retry after `Retry-After`',
};

/** Every 429 and 503 says when to come back (spec §7): the header is part of the answer, so it is declared. */
const RETRY_AFTER = z.object({
  'Retry-After': z.string().regex(/^\d+$/).meta({ description: 'Seconds to wait before retrying the same call' }),
});
const RETRY_STATUSES = new Set([429, 503]);
const stateRules = (rules: string[]) => rules.map((r) => `\`${r}\``).join('; ');

/** OpenAPI 3.1 for the route table, generated from the same zod schemas that validate requests. */
export function buildOpenApi(routes: RouteDef[], baseUrl: string): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'A personal token minted in the dashboard (Settings, API Tokens) or with `npm run admin -- token mint`. Scopes: ' +
      Object.entries(SCOPE_DESCRIPTIONS)
        .map(([scope, what]) => `\`${scope}\` (${what})`)
        .join('; ') +
      '.',
  });
  for (const route of routes) {
    const responses: RouteConfig['responses'] = {};
    for (const [status, r] of Object.entries(route.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { [r.contentType ?? 'application/json']: { schema: r.schema } } } : {}),
        ...(r.headers ? { headers: r.headers } : {}),
      };
    }
    for (const status of errorStatuses(route)) {
      const limit = route.maxBodyBytes ?? route.bodyParser?.limitBytes ?? DEFAULT_JSON_LIMIT;
      responses[String(status)] = {
        description:
          status === 413
            ? `Body over ${limit.toLocaleString('en-US')} bytes`
            : status === 400 && route.stateRules?.length
              ? `${errorMeaning[400]}; besides the schemas, these depend on stored state: ${stateRules(route.stateRules)}`
              : (errorMeaning[status] ?? 'Error'),
        content: { 'application/json': { schema: ErrorBody } },
        ...(RETRY_STATUSES.has(status) ? { headers: RETRY_AFTER } : {}),
      };
    }
    const config: RouteConfig & Record<`x-${string}`, unknown> = {
      method: route.method,
      path: route.path,
      operationId: route.operationId,
      summary: route.summary,
      description: route.scope
        ? `Needs scope \`${route.scope}\` (${SCOPE_DESCRIPTIONS[route.scope]}). Rate bucket: \`${route.bucket}\`.`
        : undefined,
      'x-state-rules': route.stateRules,
      'x-max-body-bytes':
        route.body || route.bodyParser || route.documentedBody
          ? (route.maxBodyBytes ?? route.bodyParser?.limitBytes ?? DEFAULT_JSON_LIMIT)
          : undefined,
      security: route.auth === 'none' ? [] : [{ bearerAuth: [] }],
      request: {
        params: route.params as RouteConfig['request'] extends infer R ? (R extends { params?: infer P } ? P : never) : never,
        query: route.query as RouteConfig['request'] extends infer R ? (R extends { query?: infer Q } ? Q : never) : never,
        headers: route.requestHeaders,
        // Required unless the schema takes an absent body (`send` and `dismiss` accept none).
        body: route.body
          ? { required: !route.body.safeParse(undefined).success, content: { 'application/json': { schema: route.body } } }
          : route.documentedBody
            ? {
                required: true,
                description: route.documentedBody.description,
                content: { [route.documentedBody.contentType ?? 'application/json']: { schema: route.documentedBody.schema } },
              }
            : undefined,
      },
      responses,
      'x-required-scope': route.scope,
      'x-rate-bucket': route.auth === 'none' ? null : route.bucket,
    };
    registry.registerPath(config);
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  const doc = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Growth Agent Service',
      version: API_VERSION,
      description: "The agent's front door: review queue, messaging, results, workflows, leads, block list and inbound webhooks.",
    },
    servers: [{ url: baseUrl }],
  });
  return describeTextRule(doc, routes);
}
