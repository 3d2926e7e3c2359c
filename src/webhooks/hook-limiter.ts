import type { Redis } from '../redis.js';
import { LIMIT_WINDOW_MS } from './webhooks.types.js';

/**
 * Rolling-hour counts of accepted deliveries, per hook and per account, as two sorted sets (member:
 * delivery id, score: when it was accepted). One script trims both to the window, checks both limits
 * and, only if both pass, adds the delivery to both: refused deliveries are never counted. When
 * refused it returns how long until enough counted deliveries leave the window (ms).
 */
const ADMIT = `
local function admit(keys, now, window, limits, member)
  local cutoff = now - window
  local wait = 0
  for i = 1, 2 do
    redis.call('ZREMRANGEBYSCORE', keys[i], '-inf', cutoff)
    local limit = limits[i]
    local n = redis.call('ZCARD', keys[i])
    if n >= limit then
      local e = redis.call('ZRANGE', keys[i], n - limit, n - limit, 'WITHSCORES')
      local w = tonumber(e[2]) + window - now
      if w > wait then wait = w end
    end
  end
  if wait > 0 then return wait end
  for i = 1, 2 do
    redis.call('ZADD', keys[i], now, member)
    redis.call('PEXPIRE', keys[i], window)
  end
  return 0
end
`;

/** One delivery: KEYS hook, account; ARGV now, window, per hook, per account, delivery id. */
const SCRIPT = `${ADMIT}
return admit({KEYS[1], KEYS[2]}, tonumber(ARGV[1]), tonumber(ARGV[2]), {tonumber(ARGV[3]), tonumber(ARGV[4])}, ARGV[5])
`;

/**
 * Several deliveries of one account, run in order exactly as that many calls of SCRIPT would be.
 * KEYS: the account's key, then its hooks' keys; ARGV: window, per hook, per account, then for each
 * delivery the index of its hook key, its time and its id. Returns each delivery's wait.
 */
const SCRIPT_MANY = `${ADMIT}
local window = tonumber(ARGV[1])
local limits = {tonumber(ARGV[2]), tonumber(ARGV[3])}
local out = {}
for j = 4, #ARGV, 3 do
  out[#out + 1] = admit({KEYS[tonumber(ARGV[j])], KEYS[1]}, tonumber(ARGV[j + 1]), window, limits, ARGV[j + 2])
end
return out
`;

type Evaluator = Redis & {
  gasHookWindow(k1: string, k2: string, ...args: (string | number)[]): Promise<number>;
  gasHookWindowMany(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
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
    redis.defineCommand('gasHookWindowMany', { lua: SCRIPT_MANY });
    redis.defineCommand('gasHookForget', {
      numberOfKeys: 2,
      lua: "redis.call('ZREM', KEYS[1], ARGV[1]); return redis.call('ZREM', KEYS[2], ARGV[1])",
    });
  }
  const r = redis as Evaluator;
  // One hash tag per account: both keys live in one slot on a Redis Cluster.
  const keys = (accountId: string, hookId: string) =>
    [`${keyspace}:whk:{${accountId}}:hook:${hookId}`, `${keyspace}:whk:{${accountId}}:account`] as const;
  return {
    limits,
    /** Counts `deliveryId` as accepted at `now` if both windows have room. Throws when Redis fails. */
    async admit(accountId: string, hookId: string, deliveryId: string, now: number): Promise<LimitAnswer> {
      const [k1, k2] = keys(accountId, hookId);
      const wait = Number(await r.gasHookWindow(k1, k2, now, LIMIT_WINDOW_MS, limits.perHook, limits.perAccount, deliveryId));
      return wait > 0 ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) } : { allowed: true };
    },
    /**
     * `admit` for several deliveries: one script call per account (its keys share a slot), each
     * running the deliveries in the order given. Answers by position; an Error where Redis failed.
     */
    async admitMany(ds: { accountId: string; hookId: string; deliveryId: string; at: number }[]): Promise<(LimitAnswer | Error)[]> {
      const byAccount = new Map<string, number[]>();
      ds.forEach((d, i) => {
        const list = byAccount.get(d.accountId);
        if (list) list.push(i);
        else byAccount.set(d.accountId, [i]);
      });
      const out: (LimitAnswer | Error)[] = new Array(ds.length);
      await Promise.all(
        [...byAccount].map(async ([accountId, idx]) => {
          const hookKeys: string[] = [];
          const args: (string | number)[] = [LIMIT_WINDOW_MS, limits.perHook, limits.perAccount];
          for (const i of idx) {
            const d = ds[i]!;
            const key = keys(accountId, d.hookId)[0];
            let k = hookKeys.indexOf(key);
            if (k < 0) k = hookKeys.push(key) - 1;
            args.push(k + 2, d.at, d.deliveryId);
          }
          try {
            const waits = await r.gasHookWindowMany(1 + hookKeys.length, keys(accountId, '')[1], ...hookKeys, ...args);
            idx.forEach((i, j) => {
              const wait = Number(waits[j]);
              out[i] = wait > 0 ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) } : { allowed: true };
            });
          } catch (err) {
            for (const i of idx) out[i] = err as Error;
          }
        }),
      );
      return out;
    },
    /** Uncounts a delivery that was admitted but in the end not accepted (its row or its job failed). */
    async forget(accountId: string, hookId: string, deliveryId: string): Promise<void> {
      const [k1, k2] = keys(accountId, hookId);
      await r.gasHookForget(k1, k2, deliveryId);
    },
  };
}

export type HookLimiter = ReturnType<typeof createHookLimiter>;
