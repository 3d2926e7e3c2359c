import type { Redis } from '../redis.js';
import { LIMIT_WINDOW_MS } from './webhooks.types.js';

/**
 * Rolling-hour counts of accepted deliveries, per hook and per account, as two sorted sets (member:
 * delivery id, score: when it was accepted). One script trims both to the window, checks both limits
 * and, only if both pass, adds the delivery to both: refused deliveries are never counted. When
 * refused it returns how long until enough counted deliveries leave the window (ms).
 */
const SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cutoff = now - window
local wait = 0
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', cutoff)
  local limit = tonumber(ARGV[2 + i])
  local n = redis.call('ZCARD', KEYS[i])
  if n >= limit then
    local e = redis.call('ZRANGE', KEYS[i], n - limit, n - limit, 'WITHSCORES')
    local w = tonumber(e[2]) + window - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return wait end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[i], window)
end
return 0
`;

type Evaluator = Redis & {
  gasHookWindow(k1: string, k2: string, ...args: (string | number)[]): Promise<number>;
  gasHookForget(k1: string, k2: string, member: string): Promise<number>;
};

export interface HookLimits {
  perHook: number;
  perAccount: number;
}

export type LimitAnswer = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export function createHookLimiter(redis: Redis, keyspace: string, limits: HookLimits) {
  if (!('gasHookWindow' in redis)) {
    redis.defineCommand('gasHookWindow', { numberOfKeys: 2, lua: SCRIPT });
    redis.defineCommand('gasHookForget', { numberOfKeys: 2, lua: "redis.call('ZREM', KEYS[1], ARGV[1]); return redis.call('ZREM', KEYS[2], ARGV[1])" });
  }
  const r = redis as Evaluator;
  // One hash tag per account: both keys live in one slot on a Redis Cluster.
  const keys = (accountId: string, hookId: string) => [`${keyspace}:whk:{${accountId}}:hook:${hookId}`, `${keyspace}:whk:{${accountId}}:account`] as const;
  return {
    limits,
    /** Counts `deliveryId` as accepted at `now` if both windows have room. Throws when Redis fails. */
    async admit(accountId: string, hookId: string, deliveryId: string, now: number): Promise<LimitAnswer> {
      const [k1, k2] = keys(accountId, hookId);
      const wait = Number(await r.gasHookWindow(k1, k2, now, LIMIT_WINDOW_MS, limits.perHook, limits.perAccount, deliveryId));
      return wait > 0 ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) } : { allowed: true };
    },
    /**
     * `admit` for several deliveries in one round trip (a pipeline of the same script, run in order).
     * Answers by position; an Error where Redis failed for that one.
     */
    async admitMany(ds: { accountId: string; hookId: string; deliveryId: string; at: number }[]): Promise<(LimitAnswer | Error)[]> {
      const p = r.pipeline() as unknown as { gasHookWindow(k1: string, k2: string, ...args: (string | number)[]): unknown; exec(): Promise<[Error | null, unknown][] | null> };
      for (const d of ds) {
        const [k1, k2] = keys(d.accountId, d.hookId);
        p.gasHookWindow(k1, k2, d.at, LIMIT_WINDOW_MS, limits.perHook, limits.perAccount, d.deliveryId);
      }
      let results: [Error | null, unknown][] | null;
      try {
        results = await p.exec();
      } catch (err) {
        return ds.map(() => err as Error);
      }
      return ds.map((_, i) => {
        const [err, value] = results?.[i] ?? [new Error('redis answered nothing'), null];
        if (err) return err;
        const wait = Number(value);
        return wait > 0 ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) } : { allowed: true };
      });
    },
    /** Uncounts a delivery that was admitted but in the end not accepted (its row or its job failed). */
    async forget(accountId: string, hookId: string, deliveryId: string): Promise<void> {
      const [k1, k2] = keys(accountId, hookId);
      await r.gasHookForget(k1, k2, deliveryId);
    },
  };
}

export type HookLimiter = ReturnType<typeof createHookLimiter>;
