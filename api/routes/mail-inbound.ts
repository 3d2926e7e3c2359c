import { z } from 'zod';
import { BadRequest, NotFound, RateLimited, UnsupportedMediaType } from '../../src/errors.js';
import { accountForInboundSecret, receiveInbound } from '../../src/inbound/intake.service.js';
import { clientWindow } from '../../src/measurement/clients.js';
import { readRawBody } from '../raw-body.js';
import { defineRoute, type RouteContext, type RouteDef } from '../route-def.js';
import { InboundAccepted, InboundSecretParams } from './mail-inbound.schemas.js';

export const NOT_RFC822 = 'content-type must be message/rfc822 (the received message, raw)';
export const EMPTY_MESSAGE = 'body must not be empty; send the received message, raw';
const tooLarge = (limit: number) => `body must be at most ${limit.toLocaleString('en-US')} bytes (INBOUND_MAX_BYTES)`;

/** What an inbound secret looks like (`inb_` and 40 base62 characters); anything else is 404 unread. */
const SECRET_SHAPE = /^inb_[0-9A-Za-z]{40}$/;

/** The body raw, at most the limit (api/raw-body.ts). */
const readRaw = (ctx: RouteContext, limit: number) => readRawBody(ctx.req, ctx.res, limit, tooLarge(limit));

/** An account over its raw inbound storage waits for retention to free some: a provider retries in an hour. */
const STORAGE_FULL_RETRY_SECONDS = 3600;

/** Messages per account URL per minute (INBOUND_URL_PER_MINUTE), counted in Redis before the body is read. */
function perUrl(ctx: RouteContext) {
  const { redis, config } = ctx.deps;
  return clientWindow(redis, config.queuePrefix, 'inbound-url', { limit: config.inbound.urlPerMinute, windowMs: 60_000 });
}

/** Received mail forwarded by a provider: the secret URL is the credential, as for hooks. */
export const mailInboundRoutes: RouteDef[] = [
  /**
   * The secret is checked first (a stranger cannot make us read a body), then the type, then the body,
   * read raw up to INBOUND_MAX_BYTES. A URL over its messages a minute, or an account over its raw
   * storage, answers 429 with Retry-After before the body is read. The message is stored whole under the URL's account before the
   * 202, and its parse is queued (a failed enqueue is repaired by the sweep, so it still answers 202).
   */
  defineRoute({
    method: 'post',
    path: '/api/mail/inbound/{secret}',
    operationId: 'receiveInboundMail',
    summary: 'Inbound mail over HTTP: one received message, raw (message/rfc822), from a provider that forwards mail',
    auth: 'none',
    scope: null,
    bucket: 'writes',
    params: InboundSecretParams,
    documentedBody: {
      description: 'The received message exactly as it arrived (headers and body), up to INBOUND_MAX_BYTES',
      schema: z.string(),
      contentType: 'message/rfc822',
    },
    responses: { 202: { description: 'Stored (received, not yet processed); do not retry', schema: InboundAccepted } },
    errors: [400, 413, 415, 429, 503],
  }).handle(async ({ params }, ctx) => {
    const { config } = ctx.deps;
    const found = SECRET_SHAPE.test(params.secret) ? await accountForInboundSecret(ctx.deps, params.secret) : null;
    if (!found) throw new NotFound();
    const { accountId } = found;
    if (found.storedBytes >= config.inbound.accountStorageBytes) throw new RateLimited(STORAGE_FULL_RETRY_SECONDS);
    const wait = await perUrl(ctx).take({ network: accountId });
    if (wait) throw new RateLimited(wait);
    if (ctx.req.headers['content-length'] === '0' || ctx.req.is('message/rfc822') === null) throw new BadRequest(EMPTY_MESSAGE);
    if (!ctx.req.is('message/rfc822')) throw new UnsupportedMediaType(NOT_RFC822);
    const raw = await readRaw(ctx, config.inbound.maxBytes);
    if (!raw.length) throw new BadRequest(EMPTY_MESSAGE);
    const id = await receiveInbound(ctx.deps, { accountId, via: 'http', mailFrom: null, rcptTo: [], raw });
    return { status: 202, body: { id, status: 'received' as const } };
  }),
];
