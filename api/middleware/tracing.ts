import type { RequestHandler, Response } from 'express';
import { SpanStatusCode } from '@opentelemetry/api';
import { serverSpan, withContext, type Span } from '../../src/tracing/spans.js';
import { routeOf } from './http-metrics.js';

const SPAN = Symbol('server span');
type Traced = Response & { [SPAN]: Span };

const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Names the span after the route template once the response is done (the route is known only then), and ends it. */
function end(this: Traced): void {
  const span = this[SPAN];
  const req = this.req;
  const route = routeOf(req, this);
  const status = this.statusCode;
  span.updateName(`${req.method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
  if (!this.writableFinished) span.setAttribute('gas.aborted', true);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', String(status));
  span.end();
}

/**
 * One SERVER span per request (mounted only while tracing is on), continuing the caller's W3C
 * `traceparent`, with the rest of the request run in its context: the request log takes its trace id as
 * the request id, and every job the request enqueues carries it. Attributes: method, route template,
 * status, and a client's `X-Request-Id` when it is of the safe shape (docs/decisions/tracing.md). Never
 * the URL itself (tokens ride in some paths) nor any other header.
 */
export function httpTracing(): RequestHandler {
  return (req, res, next) => {
    const { span, ctx } = serverSpan(req.method, req.headers);
    const given = req.headers['x-request-id'];
    if (typeof given === 'string' && CLIENT_ID.test(given)) span.setAttribute('gas.client_request_id', given);
    (res as Traced)[SPAN] = span;
    res.on('close', end);
    withContext(ctx, next);
  };
}
