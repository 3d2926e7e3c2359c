import { z } from 'zod';
import { BadRequest, NotFound, PayloadTooLarge } from '../../src/errors.js';
import { receiveDelivery } from '../../src/webhooks/intake.service.js';
import { MAX_BODY_BYTES } from '../../src/webhooks/webhooks.types.js';
import { defineRoute, type RouteContext, type RouteDef } from '../route.js';
import { HookTokenParams, WebhookAccepted } from './webhook.schemas.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export const TOO_LARGE = 'body must be at most 64,000 bytes';
export const NOT_JSON_TYPE = 'content-type must be application/json';
export const EMPTY = 'body must not be empty; send a JSON value';
export const NOT_JSON = 'body must be JSON';

/**
 * Reads at most MAX_BODY_BYTES. A declared length over it is refused unread; a body that grows past
 * it is refused at the first byte over, without waiting for the rest (body-parser would read the
 * whole request off the wire before answering). The connection is then closed, not drained.
 */
function readBody(ctx: RouteContext): Promise<Buffer> {
  const { req, res } = ctx;
  const tooLarge = () => {
    res.setHeader('Connection', 'close');
    req.pause();
    return new PayloadTooLarge(TOO_LARGE);
  };
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') return Promise.reject(new BadRequest('body must not be compressed (content-encoding must be identity)'));
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
    };
    function onData(chunk: Buffer) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        cleanup();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    }
    function onEnd() {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    }
    function onError(err?: unknown) {
      cleanup();
      reject(err instanceof Error ? err : new BadRequest('request was aborted before the body arrived'));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}

/** The body as checked JSON text (spec 4.8): content type, encoding, size, UTF-8 and JSON, in that order. */
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
  try {
    JSON.parse(text);
  } catch {
    throw new BadRequest(NOT_JSON);
  }
  return { text, bytes: raw.length };
}

/** Inbound webhooks (issue 5): the secret URL is the credential, so no bearer token, scope or bucket. */
export const webhookRoutes: RouteDef[] = [
  /**
   * At most 64,000 bytes are ever read; then the token's hash is looked up in the live-hooks registry
   * (Redis) and only a live hook's delivery reaches Postgres. Unknown, disabled, deleted and regenerated
   * tokens are the same registry miss: the same 404, with no database statement.
   */
  defineRoute({
    method: 'post',
    path: '/api/webhook/hook/{hookToken}',
    operationId: 'deliverWebhook',
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
    const { text, bytes } = await readJson(ctx);
    const received = await receiveDelivery(ctx.deps, params.hookToken, text, bytes);
    if (!received) throw new NotFound();
    return { status: 202, body: { accepted: true, deliveryId: received.deliveryId } };
  }),
];
