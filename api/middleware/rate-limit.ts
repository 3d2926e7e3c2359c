import type { Response } from 'express';
import { RateLimited, Unavailable } from '../../src/errors.js';
import type { Principal } from '../../src/tokens/tokens.types.js';
import type { AppDeps, RouteDef } from '../route.js';

/**
 * Spends one request from the route's bucket and the account's. Over the limit → 429 with
 * Retry-After. Redis down: reads go on unlimited, writes and messages answer 503.
 */
export async function applyRateLimit(deps: AppDeps, principal: Principal, bucket: RouteDef['bucket'], res: Response): Promise<void> {
  let decision;
  try {
    decision = await deps.limiter.consume(principal.accountId, principal.tokenId, bucket);
  } catch (err) {
    if (bucket === 'reads') {
      deps.logger.warn({ err: (err as Error).message }, 'rate limiter unreachable; serving read unlimited');
      return;
    }
    throw new Unavailable();
  }
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) throw new RateLimited(decision.retryAfterSeconds);
}
