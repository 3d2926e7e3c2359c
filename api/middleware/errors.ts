import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { AppError, BadRequest, isInfraError, NotFound, PayloadTooLarge, ServerMisconfigured, Unavailable } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';

/** Maps anything thrown to one of our errors; body-parser and infrastructure faults included. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; expose?: boolean };
  if (e?.type === 'entity.parse.failed') return new BadRequest('body must be valid JSON');
  if (e?.type === 'entity.too.large') return new PayloadTooLarge('body is too large');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') return new BadRequest('body must be UTF-8 JSON');
  if (e?.type === 'request.aborted') return new BadRequest('request was aborted before the body arrived');
  if (e?.type === 'request.size.invalid') return new BadRequest('body must be as long as its content-length says');
  // A body its Content-Encoding cannot undo (zlib's or brotli's error, passed on by body-parser as a 400).
  if (e?.status === 400 && e.expose && !e.type)
    return new BadRequest('body could not be decompressed: it does not match its content-encoding');
  // A path the router could not percent-decode (`/l/%ZZ`): it names nothing of ours.
  if (err instanceof URIError) return new NotFound();
  if (isInfraError(err)) return new Unavailable();
  return new ServerMisconfigured();
}

/** Writes the spec's error shape. Every error is `no-store`; nothing internal reaches the body. */
export function sendError(res: Response, error: AppError): void {
  if (res.headersSent) return;
  res.status(error.status);
  res.setHeader('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(error.headers())) res.setHeader(k, v);
  res.json(error.body());
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const error = toAppError(err);
    if (error.status >= 500) ((req as { log?: Logger }).log ?? logger).error({ err, status: error.status }, 'request failed');
    sendError(res, error);
  };
}

export const notFoundHandler: RequestHandler = (_req, res) => sendError(res, new NotFound());
