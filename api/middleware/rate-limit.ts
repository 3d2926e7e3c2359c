import type { Response } from 'express';
import { RateLimited, Unavailable } from '../../src/errors.js';
import type { LimitDecision } from '../../src/rate-limit.js';
import type { AppDeps, RouteDef } from '../route-def.js';
import { metrics } from '../../src/metrics/registry.js';

export type Spent = LimitDecision | { unavailable: true };

/** Spends one request from the route's bucket and the account's; never throws (Redis down → unavailable). */
export function spend(deps: AppDeps, ids: { accountId: string; tokenId: string }, bucket: RouteDef['bucket']): Promise<Spent> {
  return deps.limiter.consume(ids.accountId, ids.tokenId, bucket).catch((err: Error) => {
    deps.logger.warn({ err: err.message, bucket }, 'rate limiter unreachable');
    return { unavailable: true as const };
  });
}

/**
 * Applies a spend to the response: RateLimit-* headers, 429 with Retry-After over the limit. With the
 * limiter down, reads go on unlimited and writes and messages answer 503.
 */
export function applyLimit(spent: Spent, bucket: RouteDef['bucket'], res: Response): void {
  if ('unavailable' in spent) {
    if (bucket === 'reads') return;
    throw new Unavailable();
  }
  res.setHeader('RateLimit-Limit', String(spent.limit));
  res.setHeader('RateLimit-Remaining', String(spent.remaining));
  res.setHeader('RateLimit-Reset', String(spent.resetSeconds));
  if (!spent.allowed) {
    metrics.rateLimitRefusals.inc({ bucket: spent.bucket });
    throw new RateLimited(spent.retryAfterSeconds);
  }
}
