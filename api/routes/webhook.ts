import { z } from 'zod';
import { BadRequest, NotFound } from '../../src/errors.js';
import { hookMayBeLive, receiveDelivery } from '../../src/webhooks/intake.service.js';
import { MAX_BODY_BYTES } from '../../src/webhooks/webhooks.types.js';
import { readRawBody } from '../raw-body.js';
import { DEPTH_RULE, deeperThan } from '../middleware/json-rules.js';
import { defineRoute, type RouteContext, type RouteDef } from '../route-def.js';
import { HookTokenParams, WebhookAccepted } from './webhook.schemas.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export const TOO_LARGE = 'body must be at most 64,000 bytes';
export const NOT_JSON_TYPE = 'content-type must be application/json';
export const EMPTY = 'body must not be empty; send a JSON value';
export const NOT_JSON = 'body must be JSON';

/** The body raw, at most the limit (api/raw-body.ts). */
const readBody = (ctx: RouteContext) => readRawBody(ctx.req, ctx.res, MAX_BODY_BYTES, TOO_LARGE);

/** The body as checked JSON text (spec 4.8): content type, encoding, size, UTF-8, JSON and nesting, in that order. */
async function readJson(ctx: RouteContext): Promise<{ text: string; bytes: number }> {
  const kind = ctx.req.is(['application/json', 'application/*+json']);
  if (kind === null || ctx.req.headers['content-length'] === '0') throw new BadRequest(EMPTY);
  if (!kind) throw new BadRequest(NOT_JSON_TYPE);
  const raw = await readBody(ctx);
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new BadRequest('body must be UTF-8 JSON');
  }
  if (!text.trim()) throw new BadRequest(EMPTY);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequest(NOT_JSON);
  }
  // Refused here, not accepted and then lost: a 202 must reach the agent (docs/decisions/api-edge.md).
  if (deeperThan(value)) throw new BadRequest(`body ${DEPTH_RULE}`);
  return { text, bytes: raw.length };
}

/** Inbound webhooks: the secret URL is the credential, so no bearer token, scope or bucket. */
export const webhookRoutes: RouteDef[] = [
  /**
   * The token first: its hash is looked up in the live-hooks registry (Redis), and a token no live hook
   * has answers 404 before a byte of the body is read (nor `100 Continue` sent). Then at most 64,000
   * bytes are read, and only a live hook's delivery reaches Postgres. Unknown, disabled, deleted and
   * regenerated tokens are the same registry miss: the same 404, with no database statement.
   */
  defineRoute({
    method: 'post',
    path: '/api/webhook/hook/{hookToken}',
    operationId: 'deliverWebhook',
    maxBodyBytes: MAX_BODY_BYTES,
    summary: 'Inbound webhook: any JSON value up to 64,000 bytes, handed to the agent as outside data',
    auth: 'none',
    scope: null,
    bucket: 'writes',
    params: HookTokenParams,
    documentedBody: {
      description: 'Any JSON value (no schema), up to 64,000 bytes; handed to the agent as outside data',
      schema: z.unknown(),
    },
    responses: { 202: { description: 'Accepted (received, not done); do not retry', schema: WebhookAccepted } },
    errors: [400, 413, 429, 502, 503],
  }).handle(async ({ params }, ctx) => {
    if (!(await hookMayBeLive(ctx.deps, params.hookToken))) throw new NotFound();
    const { text, bytes } = await readJson(ctx);
    const received = await receiveDelivery(ctx.deps, params.hookToken, text, bytes);
    if (!received) throw new NotFound();
    return { status: 202, body: { accepted: true, deliveryId: received.deliveryId } };
  }),
];
