import { newId } from '../ids.js';
import { enqueueMany } from '../jobs/registry.js';
import { webhookEvent, webhookEventJobId } from '../jobs/webhook-event.job.js';
import { BadGateway, RateLimited } from '../errors.js';
import { keyspace } from '../redis.js';
import type { Runtime } from '../runtime.js';
import { createBatcher, type Batcher } from './batcher.js';
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

interface Arrival {
  tokenHash: string;
  id: string;
  at: number;
  bytes: number;
  body: string;
}

/**
 * Concurrent POSTs are gathered (group commit, no timer: a lone POST goes at once) so that one
 * statement and one commit log them all and one script call per account counts them; their jobs are
 * queued together, each its own add. Each request still answers only once its own row is committed
 * and its own job queued. One gatherer per set of connections (the API's deps).
 */
const gatherers = new WeakMap<object, Batcher<Arrival, { deliveryId: string } | null>>();

function gathererFor(deps: IntakeDeps): Batcher<Arrival, { deliveryId: string } | null> {
  let g = gatherers.get(deps);
  if (!g) {
    g = createBatcher((arrivals: Arrival[]) => receiveMany(deps, arrivals), { maxBatch: 100, maxInFlight: 2, retrySingly: false });
    gatherers.set(deps, g);
  }
  return g;
}

/**
 * A POST to a hook URL, body already read and checked: logs it and hands it on. Null when no live hook
 * has that token (the caller answers 404). The same work for every token: one SHA-256 and the same
 * indexed statement (lookup and log together) as the POSTs gathered with it; nothing about the
 * token's shape short-circuits it.
 */
export async function receiveDelivery(deps: IntakeDeps, token: string, body: string, bytes: number): Promise<{ deliveryId: string } | null> {
  return gathererFor(deps).submit({ tokenHash: hashHookToken(token), id: newId('dlv'), at: webhookClock.now(), bytes, body });
}

async function receiveMany(deps: IntakeDeps, arrivals: Arrival[]): Promise<({ deliveryId: string } | null | Error)[]> {
  const repo = webhooksRepository(deps.db);
  let hooks: ({ hookId: string; accountId: string } | null | Error)[];
  try {
    hooks = await repo.insertForTokens(arrivals);
  } catch (err) {
    // One statement: nothing was logged. Alone, each gets its own answer (503 when Postgres is away).
    if (arrivals.length === 1) throw err;
    hooks = await Promise.all(arrivals.map((a) => repo.insertForTokens([a]).then(([h]) => h ?? null, (e: unknown) => e as Error)));
  }
  const logged: Logged[] = [];
  arrivals.forEach((a, i) => {
    const hook = hooks[i];
    if (hook instanceof Error) return;
    if (hook) logged.push({ deliveryId: a.id, accountId: hook.accountId, hookId: hook.hookId, at: a.at });
  });
  const outcomes = new Map((await handOnMany(deps, logged)).map((o, i) => [logged[i]!.deliveryId, o]));
  return arrivals.map((a, i) => {
    const hook = hooks[i];
    if (hook instanceof Error) return hook;
    const o = outcomes.get(a.id);
    if (o === undefined) return null;
    return o instanceof Error ? o : { deliveryId: a.id };
  });
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
  const [outcome] = await handOnMany(deps, [{ deliveryId, accountId: hook.accountId, hookId: hook.hookId, at }]);
  if (outcome instanceof Error) throw outcome;
  return { deliveryId, outcome: 'Accepted' };
}

/**
 * Logged deliveries (committed as Accepted) are counted against both rolling-hour windows and their
 * `webhook-events` jobs queued (DESIGN rule 2); answers by position: null when accepted, else the
 * error that delivery's request throws. Over a limit: the log says Rate Limited, RateLimited. Redis
 * unreachable (the limiter and the queue share it): the log says Worker Error, it is not counted,
 * BadGateway (502); the sender retries the same POST once Redis is back. If this process dies midway
 * the rows stay Accepted and the maintenance sweeper queues them.
 */
async function handOnMany(deps: IntakeDeps, ds: Logged[]): Promise<(null | Error)[]> {
  if (!ds.length) return [];
  const repo = webhooksRepository(deps.db);
  const limiter = hookLimiter(deps);
  const answers = await limiter.admitMany(ds);
  const out: (null | Error)[] = ds.map(() => null);
  const unreachable: Logged[] = [];
  const refused: Logged[] = [];
  const admitted: number[] = [];
  answers.forEach((a, i) => {
    const d = ds[i]!;
    if (a instanceof Error) {
      unreachable.push(d);
      deps.logger.warn({ deliveryId: d.deliveryId, hookId: d.hookId, err: a.message }, 'webhook delivery recorded; limiter and queue unreachable');
      out[i] = new BadGateway(AGENT_NOT_WOKEN);
    } else if (!a.allowed) {
      refused.push(d);
      out[i] = new RateLimited(a.retryAfterSeconds);
    } else admitted.push(i);
  });
  const added = await enqueueMany(
    deps.queues,
    webhookEvent,
    admitted.map((i) => ({ payload: { deliveryId: ds[i]!.deliveryId }, jobId: webhookEventJobId(ds[i]!.deliveryId) })),
  );
  // Not handed on, so not accepted: they stop counting and the log says why.
  const forgetting: Promise<void>[] = [];
  admitted.forEach((i, j) => {
    const err = added[j];
    if (!(err instanceof Error)) return;
    const d = ds[i]!;
    deps.logger.warn({ deliveryId: d.deliveryId, hookId: d.hookId, err: err.message }, 'webhook delivery recorded; queue unreachable');
    forgetting.push(limiter.forget(d.accountId, d.hookId, d.deliveryId).catch(() => {}));
    out[i] = new BadGateway(AGENT_NOT_WOKEN);
    unreachable.push(d);
  });
  await Promise.all([
    ...forgetting,
    unreachable.length ? repo.markWorkerError(unreachable.map((d) => d.deliveryId), 'queue unreachable') : null,
    refused.length ? repo.markRateLimited(refused.map((d) => d.deliveryId)) : null,
  ]);
  return out;
}
