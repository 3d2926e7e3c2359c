import { newId } from '../ids.js';
import { metrics } from '../metrics/registry.js';
import { enqueueMany } from '../jobs/registry.js';
import { currentContext, within, type TraceContext } from '../tracing/spans.js';
import { webhookEvent } from '../jobs/webhook-events.js';
import { BadGateway, RateLimited } from '../errors.js';
import { keyspace } from '../redis.js';
import type { Deps } from '../deps.js';
import { createBatcher, type Batcher } from '../batcher.js';
import { createHookLimiter, type HookLimiter, type LimitAnswer } from './hook-limiter.js';
import { hashHookToken } from './hook-token.js';
import { liveHooks, type LiveHook } from './live-hooks.js';
export { hookMayBeLive } from './live-hooks.js';
import { webhooksRepository } from './webhooks.repository.js';
import type { Outcome } from './webhooks.types.js';

/** What intake needs: Postgres, the fail-fast producer Redis and its queues. */
export type IntakeDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues'>;

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
  /** The trace of the request that brought it (tracing on): its job joins that trace, whichever request ran the batch. */
  trace?: TraceContext;
}

interface Arrival {
  tokenHash: string;
  id: string;
  at: number;
  bytes: number;
  body: string;
  trace?: TraceContext;
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
 * has that token (the caller answers 404). The same work for every token no live hook has, whatever
 * it looks like or once was (unknown, disabled, deleted, regenerated away): one SHA-256 and one
 * lookup in the live-hooks registry in Redis, gathered with the POSTs around it; no Postgres
 * statement. Only while the registry is not trusted does every token go to Postgres, as before.
 */
export async function receiveDelivery(
  deps: IntakeDeps,
  token: string,
  body: string,
  bytes: number,
): Promise<{ deliveryId: string } | null> {
  const arrival = { tokenHash: hashHookToken(token), id: newId('dlv'), at: webhookClock.now(), bytes, body, trace: currentContext() };
  return gathererFor(deps)
    .submit(arrival)
    .then(
      (got) => {
        metrics.webhookDeliveries.inc({ outcome: got ? 'accepted' : 'unknown_hook' });
        return got;
      },
      (err: unknown) => {
        const outcome = err instanceof RateLimited ? 'limited' : err instanceof BadGateway ? 'not_woken' : 'unavailable';
        metrics.webhookDeliveries.inc({ outcome });
        throw err;
      },
    );
}

type Answer = { deliveryId: string } | null | Error;

async function receiveMany(deps: IntakeDeps, arrivals: Arrival[]): Promise<Answer[]> {
  let found: (LiveHook | null)[] | 'untrusted';
  try {
    found = await liveHooks(deps).lookup(arrivals.map((a) => a.tokenHash));
  } catch {
    // Redis is failing: Postgres tells live from dead as it did before the registry (and the
    // limiter, on the same Redis, then answers 502 for a live hook).
    found = 'untrusted';
  }
  return found === 'untrusted' ? receiveLogged(deps, arrivals) : receiveKnown(deps, arrivals, found);
}

const MINUTE = 60_000;

/**
 * Deliveries whose token the registry knows: counted first, so only admitted ones (and, with Redis
 * failing mid-batch, ones the limiter could not answer) are logged one row each; refused ones are
 * added to their hook's refusals row for the minute. Postgres still joins on the active hook, so a
 * registry entry left over from a hook that is no longer live is the same 404 (and uncounted).
 */
async function receiveKnown(deps: IntakeDeps, arrivals: Arrival[], found: (LiveHook | null)[]): Promise<Answer[]> {
  const out: Answer[] = arrivals.map(() => null);
  // Each known arrival with its position and what the limiter said (an Error when Redis failed).
  const known = arrivals.flatMap((a, i) => {
    const h = found[i];
    return h
      ? [
          {
            a,
            i,
            d: { deliveryId: a.id, accountId: h.accountId, hookId: h.hookId, at: a.at, trace: a.trace } as Logged,
            answer: null as LimitAnswer | Error | null,
          },
        ]
      : [];
  });
  if (!known.length) return out;
  const limiter = hookLimiter(deps);
  const repo = webhooksRepository(deps.db);
  const answers = await limiter.admitMany(known.map((k) => k.d));
  for (const [j, answer] of answers.entries()) known[j]!.answer = answer;
  const toLog = known.filter((k) => k.answer instanceof Error || k.answer?.allowed);
  const refused = known.filter((k) => !(k.answer instanceof Error) && k.answer?.allowed === false);
  const forget = (ks: typeof known) => Promise.all(ks.map(({ d }) => limiter.forget(d.accountId, d.hookId, d.deliveryId).catch(() => {})));
  const [logged, counted] = await Promise.all([
    toLog.length ? repo.insertForTokens(toLog.map((k) => k.a)).catch((e: unknown) => e as Error) : [],
    refused.length ? repo.countRefusals(refusalGroups(refused.map((k) => k.a))).catch((e: unknown) => e as Error) : new Set<string>(),
  ]);
  const admitted: Logged[] = [];
  const unreachable: Logged[] = [];
  if (logged instanceof Error) {
    // Nothing was logged: uncount what was counted; each request answers with the error (503).
    await forget(toLog.filter((k) => !(k.answer instanceof Error)));
    for (const k of toLog) out[k.i] = logged;
  } else {
    // A registry entry Postgres does not back (a hook ended whose Redis removal failed): 404, uncounted.
    await forget(toLog.filter((k, j) => !logged[j] && !(k.answer instanceof Error)));
    for (const [j, k] of toLog.entries()) {
      if (!logged[j]) continue;
      if (!(k.answer instanceof Error)) {
        admitted.push(k.d);
        continue;
      }
      unreachable.push(k.d);
      deps.logger.warn(
        { deliveryId: k.d.deliveryId, hookId: k.d.hookId, err: k.answer.message },
        'webhook delivery recorded; limiter and queue unreachable',
      );
      out[k.i] = new BadGateway(AGENT_NOT_WOKEN);
    }
  }
  for (const k of refused) {
    if (counted instanceof Error) out[k.i] = counted;
    else if (counted.has(`${k.d.hookId} ${minuteOf(k.a.at)}`) && k.answer && !(k.answer instanceof Error) && !k.answer.allowed)
      out[k.i] = new RateLimited(k.answer.retryAfterSeconds);
  }
  const [queued] = await Promise.all([
    queueAdmitted(deps, admitted),
    unreachable.length
      ? repo.markWorkerError(
          unreachable.map((d) => d.deliveryId),
          'queue unreachable',
        )
      : null,
  ]);
  const position = new Map(known.map((k) => [k.d.deliveryId, k.i]));
  for (const [j, d] of admitted.entries()) out[position.get(d.deliveryId)!] = queued[j] ?? { deliveryId: d.deliveryId };
  return out;
}

const minuteOf = (at: number) => at - (at % MINUTE);

/** Refused deliveries gathered by token and minute: one refusals-row update each. */
function refusalGroups(refused: Arrival[]) {
  const groups = new Map<string, { tokenHash: string; id: string; minute: number; at: number; lastAt: number; bytes: number; n: number }>();
  for (const a of refused) {
    const minute = minuteOf(a.at);
    const g = groups.get(`${a.tokenHash} ${minute}`);
    if (!g)
      groups.set(`${a.tokenHash} ${minute}`, { tokenHash: a.tokenHash, id: a.id, minute, at: a.at, lastAt: a.at, bytes: a.bytes, n: 1 });
    else Object.assign(g, { at: Math.min(g.at, a.at), lastAt: Math.max(g.lastAt, a.at), bytes: Math.max(g.bytes, a.bytes), n: g.n + 1 });
  }
  return [...groups.values()];
}

/** Every token to Postgres, lookup and log in one statement, then counted: while the registry is not trusted. */
async function receiveLogged(deps: IntakeDeps, arrivals: Arrival[]): Promise<Answer[]> {
  const repo = webhooksRepository(deps.db);
  let hooks: ({ hookId: string; accountId: string } | null | Error)[];
  try {
    hooks = await repo.insertForTokens(arrivals);
  } catch (err) {
    // One statement: nothing was logged. Alone, each gets its own answer (503 when Postgres is away).
    if (arrivals.length === 1) throw err;
    hooks = await Promise.all(
      arrivals.map((a) =>
        repo.insertForTokens([a]).then(
          ([h]) => h ?? null,
          (e: unknown) => e as Error,
        ),
      ),
    );
  }
  const logged: Logged[] = [];
  arrivals.forEach((a, i) => {
    const hook = hooks[i];
    if (hook instanceof Error) return;
    if (hook) logged.push({ deliveryId: a.id, accountId: hook.accountId, hookId: hook.hookId, at: a.at, trace: a.trace });
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
  await webhooksRepository(deps.db).insertDelivery({
    id: deliveryId,
    accountId: hook.accountId,
    hookId: hook.hookId,
    at,
    outcome: 'Accepted',
    bytes,
    body,
    replayOf,
    error: null,
  });
  const [outcome] = await handOnMany(deps, [{ deliveryId, accountId: hook.accountId, hookId: hook.hookId, at }]);
  if (outcome instanceof Error) throw outcome;
  return { deliveryId, outcome: 'Accepted' };
}

/**
 * For deliveries logged before they were counted (a replay, or a POST while the registry is not
 * trusted). Logged deliveries (committed as Accepted) are counted against both rolling-hour windows and their
 * `webhook-events` jobs queued (docs/rules.md, "Commit, then enqueue, then repair"); answers by position: null when accepted, else the
 * error that delivery's request throws. Over a limit: the row says Rate Limited (one row each here), RateLimited. Redis
 * unreachable (the limiter and the queue share it): the log says Worker Error, it is not counted,
 * BadGateway (502); the sender retries the same POST once Redis is back. If this process dies midway
 * the rows stay Accepted and the maintenance sweeper queues them.
 */
async function handOnMany(deps: IntakeDeps, ds: Logged[]): Promise<(null | Error)[]> {
  if (!ds.length) return [];
  const repo = webhooksRepository(deps.db);
  const answers = await hookLimiter(deps).admitMany(ds);
  const out: (null | Error)[] = ds.map(() => null);
  const unreachable: Logged[] = [];
  const refused: Logged[] = [];
  const admitted: number[] = [];
  answers.forEach((a, i) => {
    const d = ds[i]!;
    if (a instanceof Error) {
      unreachable.push(d);
      deps.logger.warn(
        { deliveryId: d.deliveryId, hookId: d.hookId, err: a.message },
        'webhook delivery recorded; limiter and queue unreachable',
      );
      out[i] = new BadGateway(AGENT_NOT_WOKEN);
    } else if (!a.allowed) {
      refused.push(d);
      out[i] = new RateLimited(a.retryAfterSeconds);
    } else admitted.push(i);
  });
  const [queued] = await Promise.all([
    queueAdmitted(
      deps,
      admitted.map((i) => ds[i]!),
    ),
    unreachable.length
      ? repo.markWorkerError(
          unreachable.map((d) => d.deliveryId),
          'queue unreachable',
        )
      : null,
    refused.length ? repo.markRateLimited(refused.map((d) => d.deliveryId)) : null,
  ]);
  for (const [j, i] of admitted.entries()) out[i] = queued[j] ?? null;
  return out;
}

/**
 * Queues the `webhook-events` job of each logged, counted delivery. One whose add fails is not handed
 * on, so not accepted: it stops counting and the log says why (Worker Error, 502).
 */
async function queueAdmitted(deps: IntakeDeps, ds: Logged[]): Promise<(null | Error)[]> {
  if (!ds.length) return [];
  // Each add in its own request's trace (a pass-through while tracing is off).
  const added = await Promise.all(
    ds.map((d) => within(d.trace, () => enqueueMany(deps.queues, webhookEvent, [{ deliveryId: d.deliveryId }]).then(([err]) => err))),
  );
  const limiter = hookLimiter(deps);
  const failed: Logged[] = [];
  const out = ds.map((d, j) => {
    const err = added[j];
    if (!(err instanceof Error)) return null;
    deps.logger.warn({ deliveryId: d.deliveryId, hookId: d.hookId, err: err.message }, 'webhook delivery recorded; queue unreachable');
    failed.push(d);
    return new BadGateway(AGENT_NOT_WOKEN);
  });
  if (failed.length) {
    await Promise.all([
      ...failed.map((d) => limiter.forget(d.accountId, d.hookId, d.deliveryId).catch(() => {})),
      webhooksRepository(deps.db).markWorkerError(
        failed.map((d) => d.deliveryId),
        'queue unreachable',
      ),
    ]);
  }
  return out;
}
