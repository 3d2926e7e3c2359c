import { randomUUID } from 'node:crypto';
import type { Bucket, BucketLimit } from './config.js';
import { authGuardKeys } from './tokens/auth-guard.js';
import type { Redis } from './redis.js';

/**
 * Two token buckets checked and spent in one atomic script: the route's bucket for this token and the
 * account's bucket shared by all its tokens. A request passes only if both have a token; a refused
 * request spends nothing. Time comes from Redis, so every API process agrees.
 * The same call answers the two questions an API process asks before it trusts a token it remembers
 * (src/tokens/auth-guard.ts): is this token marked revoked, and which epoch is the account's guard in
 * (a new one whenever Redis lost its data: KEYS[3] is created with ARGV[5] when missing).
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {1}
local level = {}
for i = 1, 2 do
  local rate = tonumber(ARGV[i * 2 - 1])
  local burst = tonumber(ARGV[i * 2])
  local v = redis.call('HMGET', KEYS[i], 'tokens', 'ts')
  local tokens = tonumber(v[1])
  local ts = tonumber(v[2])
  if tokens == nil or ts == nil then tokens = burst; ts = now end
  tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
  level[i] = tokens
  if tokens < 1 then out[1] = 0 end
end
for i = 1, 2 do
  local rate = tonumber(ARGV[i * 2 - 1])
  local burst = tonumber(ARGV[i * 2])
  local tokens = level[i]
  if out[1] == 1 then
    tokens = tokens - 1
    redis.call('HSET', KEYS[i], 'tokens', tostring(tokens), 'ts', now)
    redis.call('PEXPIRE', KEYS[i], math.ceil(burst / rate) + 1000)
  end
  local wait = 0
  if tokens < 1 then wait = math.ceil((1 - tokens) / rate) end
  out[#out + 1] = math.floor(tokens)
  out[#out + 1] = math.ceil((burst - tokens) / rate)
  out[#out + 1] = wait
end
local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[5]
  redis.call('SET', KEYS[3], epoch)
end
out[#out + 1] = epoch
out[#out + 1] = redis.call('EXISTS', KEYS[4])
return out
`;

export interface LimitDecision {
  allowed: boolean;
  /** The bucket reported in the RateLimit-* headers: the tighter of the two. */
  bucket: Bucket;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  /** The account's auth-guard epoch, and whether the token is marked revoked (see auth-guard.ts). */
  guard: { epoch: string; revoked: boolean };
}

type Evaluator = Redis & {
  gasTokenBuckets(
    k1: string,
    k2: string,
    k3: string,
    k4: string,
    ...args: (string | number)[]
  ): Promise<[number, number, number, number, number, number, number, string, number]>;
};

export function createRateLimiter(redis: Redis, keyspace: string, limits: Record<Bucket, BucketLimit>) {
  if (!('gasTokenBuckets' in redis)) redis.defineCommand('gasTokenBuckets', { numberOfKeys: 4, lua: SCRIPT });
  const r = redis as Evaluator;
  const perMs = (b: BucketLimit) => b.perMinute / 60_000;

  return {
    limits,
    /** Spends one request from `bucket` (this token) and from the account. Throws when Redis fails. */
    async consume(accountId: string, tokenId: string, bucket: Exclude<Bucket, 'account'>): Promise<LimitDecision> {
      const own = limits[bucket];
      const acct = limits.account;
      // One hash tag per account keeps both keys in one slot on a Redis Cluster.
      const guard = authGuardKeys(keyspace, accountId, tokenId);
      const [ok, ownLeft, ownReset, ownWait, acctLeft, acctReset, acctWait, epoch, revoked] = await r.gasTokenBuckets(
        `${keyspace}:rl:{${accountId}}:${tokenId}:${bucket}`,
        `${keyspace}:rl:{${accountId}}:account`,
        guard.epoch,
        guard.revoked,
        perMs(own),
        own.burst,
        perMs(acct),
        acct.burst,
        randomUUID(),
      );
      const accountTighter = (acctLeft ?? 0) / acct.burst < (ownLeft ?? 0) / own.burst;
      const wait = Math.max(ownWait ?? 0, acctWait ?? 0);
      return {
        allowed: ok === 1,
        bucket: accountTighter ? 'account' : bucket,
        limit: accountTighter ? acct.burst : own.burst,
        remaining: Math.max(0, (accountTighter ? acctLeft : ownLeft) ?? 0),
        resetSeconds: Math.ceil(((accountTighter ? acctReset : ownReset) ?? 0) / 1000),
        retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)),
        guard: { epoch: String(epoch), revoked: revoked === 1 },
      };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
