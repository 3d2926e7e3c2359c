import { newId } from '../ids.js';
import { enqueue } from '../jobs/registry.js';
import { webhookEvent, webhookEventJobId } from '../jobs/webhook-event.job.js';
import { BadGateway, RateLimited } from '../errors.js';
import { keyspace } from '../redis.js';
import type { Runtime } from '../runtime.js';
import { createHookLimiter, type HookLimiter } from './hook-limiter.js';
import { hashHookToken } from './hook-token.js';
import { webhooksRepository } from './webhooks.repository.js';
import type { Outcome } from './webhooks.types.js';

/** What intake needs: Postgres, the fail-fast producer Redis and its queues. */
export type IntakeDeps = Pick<Runtime, 'config' | 'logger' | 'db' | 'redis' | 'queues'>;

/** The clock intake counts with; tests move it to cross the rolling hour without waiting. */
export const webhookClock = { now: (): number => Date.now() };

export const AGENT_NOT_WOKEN = 'the delivery was recorded but the agent could not be woken; retry the same POST';

const limiters = new WeakMap<object, HookLimiter>();

/** One limiter per Redis connection (the script is defined on it once). */
export function hookLimiter(deps: Pick<IntakeDeps, 'config' | 'redis'>): HookLimiter {
  let limiter = limiters.get(deps.redis);
  if (!limiter) {
    limiter = createHookLimiter(deps.redis, keyspace(deps.config.queuePrefix), deps.config.webhooks);
    limiters.set(deps.redis, limiter);
  }
  return limiter;
}

interface Logged {
  deliveryId: string;
  accountId: string;
  hookId: string;
  at: number;
}

/**
 * A POST to a hook URL, body already read and checked: logs it and hands it on. Null when no live hook
 * has that token (the caller answers 404). The same work for every token: one SHA-256 and one indexed
 * statement (lookup and log together); nothing about the token's shape short-circuits it.
 */
export async function receiveDelivery(deps: IntakeDeps, token: string, body: string, bytes: number): Promise<{ deliveryId: string } | null> {
  const deliveryId = newId('dlv');
  const at = webhookClock.now();
  const hook = await webhooksRepository(deps.db).insertForToken(hashHookToken(token), { id: deliveryId, at, bytes, body });
  if (!hook) return null;
  await handOn(deps, { deliveryId, accountId: hook.accountId, hookId: hook.hookId, at });
  return { deliveryId };
}

/** Logs a delivery of a known hook (a replay) and hands it on like a POST. */
export async function logAndHandOn(
  deps: IntakeDeps,
  hook: { hookId: string; accountId: string },
  body: string,
  bytes: number,
  replayOf: string,
): Promise<{ deliveryId: string; outcome: Outcome }> {
  const deliveryId = newId('dlv');
  const at = webhookClock.now();
  await webhooksRepository(deps.db).insertDelivery({ id: deliveryId, accountId: hook.accountId, hookId: hook.hookId, at, outcome: 'Accepted', bytes, body, replayOf, error: null });
  await handOn(deps, { deliveryId, accountId: hook.accountId, hookId: hook.hookId, at });
  return { deliveryId, outcome: 'Accepted' };
}

/**
 * The logged delivery (committed as Accepted) is counted against both rolling-hour windows and its
 * `webhook-events` job queued (DESIGN rule 2). Over a limit: the log says Rate Limited, RateLimited is
 * thrown. Redis unreachable (the limiter and the queue share it): the log says Worker Error, it is not
 * counted, BadGateway (502) is thrown; the sender retries the same POST once Redis is back. If this
 * process dies midway the row stays Accepted and the maintenance sweeper queues it.
 */
async function handOn(deps: IntakeDeps, d: Logged): Promise<void> {
  const repo = webhooksRepository(deps.db);
  const limiter = hookLimiter(deps);
  let admitted: Awaited<ReturnType<HookLimiter['admit']>>;
  try {
    admitted = await limiter.admit(d.accountId, d.hookId, d.deliveryId, d.at);
  } catch (err) {
    await repo.markWorkerError(d.deliveryId, 'queue unreachable');
    deps.logger.warn({ deliveryId: d.deliveryId, hookId: d.hookId, err: (err as Error).message }, 'webhook delivery recorded; limiter and queue unreachable');
    throw new BadGateway(AGENT_NOT_WOKEN);
  }
  if (!admitted.allowed) {
    await repo.markRateLimited(d.deliveryId);
    throw new RateLimited(admitted.retryAfterSeconds);
  }
  try {
    await enqueue(deps.queues, webhookEvent, { deliveryId: d.deliveryId }, { jobId: webhookEventJobId(d.deliveryId) });
  } catch (err) {
    // Not handed on, so not accepted: it stops counting and the log says why.
    await repo.markWorkerError(d.deliveryId, 'queue unreachable');
    await limiter.forget(d.accountId, d.hookId, d.deliveryId).catch(() => {});
    deps.logger.warn({ deliveryId: d.deliveryId, hookId: d.hookId, err: (err as Error).message }, 'webhook delivery recorded; queue unreachable');
    throw new BadGateway(AGENT_NOT_WOKEN);
  }
}
