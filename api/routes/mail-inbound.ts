import { z } from 'zod';
import { BadRequest, NotFound, UnsupportedMediaType } from '../../src/errors.js';
import { accountForInboundSecret, receiveInbound } from '../../src/inbound/intake.service.js';
import { readRawBody } from '../raw-body.js';
import { defineRoute, type RouteContext, type RouteDef } from '../route.js';
import { InboundAccepted, InboundSecretParams } from './mail-inbound.schemas.js';

export const NOT_RFC822 = 'content-type must be message/rfc822 (the received message, raw)';
export const EMPTY_MESSAGE = 'body must not be empty; send the received message, raw';
const tooLarge = (limit: number) => `body must be at most ${limit.toLocaleString('en-US')} bytes (INBOUND_MAX_BYTES)`;

/** What an inbound secret looks like (`inb_` and 40 base62 characters); anything else is 404 unread. */
const SECRET_SHAPE = /^inb_[0-9A-Za-z]{40}$/;

/** The body raw, at most the limit (api/raw-body.ts). */
const readRaw = (ctx: RouteContext, limit: number) => readRawBody(ctx.req, ctx.res, limit, tooLarge(limit));

/** Received mail forwarded by a provider (issue 16): the secret URL is the credential, as for hooks. */
export const mailInboundRoutes: RouteDef[] = [
  /**
   * The secret is checked first (a stranger cannot make us read a body), then the type, then the body,
   * read raw up to INBOUND_MAX_BYTES. The message is stored whole under the URL's account before the
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
    errors: [400, 413, 415, 503],
  }).handle(async ({ params }, ctx) => {
    const { db, config } = ctx.deps;
    const accountId = SECRET_SHAPE.test(params.secret) ? await accountForInboundSecret(db, params.secret) : null;
    if (!accountId) throw new NotFound();
    if (ctx.req.headers['content-length'] === '0' || ctx.req.is('message/rfc822') === null) throw new BadRequest(EMPTY_MESSAGE);
    if (!ctx.req.is('message/rfc822')) throw new UnsupportedMediaType(NOT_RFC822);
    const raw = await readRaw(ctx, config.inbound.maxBytes);
    if (!raw.length) throw new BadRequest(EMPTY_MESSAGE);
    const id = await receiveInbound(ctx.deps, { accountId, via: 'http', mailFrom: null, rcptTo: [], raw });
    return { status: 202, body: { id, status: 'received' as const } };
  }),
];
