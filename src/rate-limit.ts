import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Bucket, BucketLimit } from './config.js';
import { authGuardKeys } from './tokens/auth-guard.js';
import { COUNTER_INIT_LUA, queueVersionKeys, type QueueVersion } from './queue-version/keys.js';
import { QueuePages } from './queue-version/pages.js';
import type { Redis } from './redis.js';

/**
 * Two token buckets checked and spent in one atomic script: the route's bucket for this token and the
 * account's bucket shared by all its tokens. A request passes only if both have a token; a refused
 * request spends nothing. Time comes from Redis, so every API process agrees.
 * The same call answers the two questions an API process asks before it trusts a token it remembers
 * (src/tokens/auth-guard.ts): is this token marked revoked, and which epoch is the account's guard in
 * (a new one whenever Redis lost its data: the epoch key is created with ARGV[3] when missing).
 *
 * It also reads the account's review-queue version (src/queue-version/keys.ts): its counter (made when
 * missing) and whether a card write is in flight, so an API process knows whether a page it cached is
 * still current (docs/decisions/stores.md, "Reads that skip Postgres").
 *
 * Requests of one account that arrive in the same turn of the event loop share one call (group commit,
 * at most MAX_BATCH): KEYS[1] the account's bucket, KEYS[2] the epoch, KEYS[3] the queue counter,
 * KEYS[4] the queue's in-flight writes, then per request its own bucket and its token's revocation
 * mark; ARGV[1..2] the account's rate (per minute) and burst, ARGV[3] a new epoch, then per request
 * its bucket's rate and burst. The requests are decided in arrival order, each exactly as if it had
 * made its own call at that moment, and the answer is 4 numbers per request (admitted, the tokens left
 * in its own bucket and in the account's, in thousandths, and its revocation mark), then the epoch, the
 * queue counter and the number of card writes in flight; the headers' figures are worked out here.
 * Every key carries the account's hash tag, so one call touches one slot of a Redis Cluster.
 *
 * Redis runs this for every authenticated request, on its one thread, so it does little: one MGET reads
 * every string key at once (the in-flight set, not a string, reads as nil there and is counted by
 * ZCOUNT), a bucket is one string "tokens ms" written with its expiry by one SET … PX (5 calls for one
 * request, against 11 with hashes, HSET and PEXPIRE), and the arithmetic of the headers is left to the
 * caller (docs/decisions/api-edge.md, "The limiter's cost in Redis").
 */
const SCRIPT = `${COUNTER_INIT_LUA}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local got = redis.call('MGET', unpack(KEYS))
local level = {}
local ttl = {}
-- Keyed by name: two requests of one token in a batch name its bucket twice and share one level.
local function fill(i, rate, burst)
  local key = KEYS[i]
  local tokens = level[key]
  if tokens == nil then
    local left, ts = string.match(got[i] or '', '^(%S+) (%d+)$')
    left = tonumber(left)
    ts = tonumber(ts)
    if left == nil or ts == nil then left = burst; ts = now end
    tokens = math.min(burst, left + math.max(0, now - ts) * rate)
    level[key] = tokens
  end
  return tokens
end
local aRate = tonumber(ARGV[1]) / 60000
local aBurst = tonumber(ARGV[2])
local out = {}
for e = 1, (#KEYS - 4) / 2 do
  local i = e * 2 + 3
  local rate = tonumber(ARGV[e * 2 + 2]) / 60000
  local burst = tonumber(ARGV[e * 2 + 3])
  local own = fill(i, rate, burst)
  local acct = fill(1, aRate, aBurst)
  local ok = 0
  if own >= 1 and acct >= 1 then
    ok = 1
    own = own - 1
    acct = acct - 1
    level[KEYS[i]] = own
    level[KEYS[1]] = acct
    ttl[KEYS[i]] = math.ceil(burst / rate) + 1000
    ttl[KEYS[1]] = math.ceil(aBurst / aRate) + 1000
  end
  local n = #out
  out[n + 1] = ok
  out[n + 2] = math.floor(own * 1000)
  out[n + 3] = math.floor(acct * 1000)
  if got[i + 1] then out[n + 4] = 1 else out[n + 4] = 0 end
end
for key, ms in pairs(ttl) do
  redis.call('SET', key, string.format('%.14g %d', level[key], now), 'PX', ms)
end
local epoch = got[2]
if not epoch then
  epoch = ARGV[3]
  redis.call('SET', KEYS[2], epoch)
end
out[#out + 1] = epoch
local counter = got[3]
if not counter then
  counter = counterInit(t)
  redis.call('SET', KEYS[3], counter)
end
out[#out + 1] = counter
out[#out + 1] = redis.call('ZCOUNT', KEYS[4], now + 1, '+inf')
return out
`;

/**
 * A bucket's key: `rl:{account}:account`, or `rl:{account}:<token>:<bucket>`, with `:s` for the string
 * form above. The hashes an earlier release kept were named without it: a process of that release
 * running beside this one during a rolling deploy keeps its own buckets instead of failing on a key of
 * the other type (its limiter would answer WRONGTYPE, and its writes 503), and the hashes expire alone.
 */
export const bucketKey = (keyspace: string, accountId: string, name: string): string => `${keyspace}:rl:{${accountId}}:${name}:s`;

/** The most requests one script call decides; more in one turn make more calls. */
export const MAX_BATCH = 64;
const PER_REQUEST = 4;

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
  /** The account's review-queue version and whether a card write of it is in flight (src/queue-version/). */
  queue: QueueVersion;
}

type Evaluator = Redis & { gasTokenBuckets(numKeys: number, ...keysAndArgs: (string | number)[]): Promise<(number | string)[]> };

interface Pending {
  tokenId: string;
  bucket: Exclude<Bucket, 'account'>;
  resolve(decision: LimitDecision): void;
  reject(err: unknown): void;
}

/**
 * `pages` is the process's review page cache: told every account's queue version as each call answers
 * (in the order Redis ran them), and emptied whenever a call fails.
 */
export function createRateLimiter(redis: Redis, keyspace: string, limits: Record<Bucket, BucketLimit>, pages = new QueuePages()) {
  if (!('gasTokenBuckets' in redis)) redis.defineCommand('gasTokenBuckets', { lua: SCRIPT });
  const r = redis as Evaluator;
  const perMs = (b: BucketLimit) => b.perMinute / 60_000;
  /** What the RateLimit headers say of a bucket holding `tokens`: whole tokens left, ms until full, ms until one. */
  const state = (b: BucketLimit, tokens: number) => ({
    left: Math.floor(tokens),
    reset: Math.ceil((b.burst - tokens) / perMs(b)),
    wait: tokens < 1 ? Math.ceil((1 - tokens) / perMs(b)) : 0,
  });
  const acct = limits.account;
  /** Requests waiting for this turn's calls, by account. */
  let waiting = new Map<string, Pending[]>();

  function decide(p: Pending, row: (number | string)[], epoch: string, queue: QueueVersion): LimitDecision {
    const [ok, ownMilli, acctMilli, revoked] = row.map(Number) as [number, number, number, number];
    const ownLimit = limits[p.bucket];
    const own = state(ownLimit, ownMilli / 1000);
    const account = state(acct, acctMilli / 1000);
    const accountTighter = account.left / acct.burst < own.left / ownLimit.burst;
    const tighter = accountTighter ? account : own;
    return {
      allowed: ok === 1,
      bucket: accountTighter ? 'account' : p.bucket,
      limit: accountTighter ? acct.burst : ownLimit.burst,
      remaining: Math.max(0, tighter.left),
      resetSeconds: Math.ceil(tighter.reset / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil(Math.max(own.wait, account.wait) / 1000)),
      guard: { epoch, revoked: revoked === 1 },
      queue,
    };
  }

  async function call(accountId: string, batch: Pending[]): Promise<void> {
    const guardEpoch = authGuardKeys(keyspace, accountId, '').epoch;
    const version = queueVersionKeys(keyspace, accountId);
    const keys = [bucketKey(keyspace, accountId, 'account'), guardEpoch, version.counter, version.writing];
    const args: (string | number)[] = [acct.perMinute, acct.burst, randomUUID()];
    for (const p of batch) {
      keys.push(bucketKey(keyspace, accountId, `${p.tokenId}:${p.bucket}`), authGuardKeys(keyspace, accountId, p.tokenId).revoked);
      args.push(limits[p.bucket].perMinute, limits[p.bucket].burst);
    }
    try {
      const out = await r.gasTokenBuckets(keys.length, ...keys, ...args);
      const at = batch.length * PER_REQUEST;
      const epoch = String(out[at]);
      const queue = { key: `${epoch}:${String(out[at + 1])}`, clean: Number(out[at + 2]) === 0 };
      pages.observe(accountId, queue);
      for (const [i, p] of batch.entries()) p.resolve(decide(p, out.slice(i * PER_REQUEST, (i + 1) * PER_REQUEST), epoch, queue));
    } catch (err) {
      pages.lost();
      for (const p of batch) p.reject(err);
    }
  }

  function flush(): void {
    const turn = waiting;
    waiting = new Map();
    for (const [accountId, all] of turn) {
      for (let i = 0; i < all.length; i += MAX_BATCH) void call(accountId, all.slice(i, i + MAX_BATCH));
    }
  }

  return {
    limits,
    pages,
    /** Spends one request from `bucket` (this token) and from the account. Rejects when Redis fails. */
    consume(accountId: string, tokenId: string, bucket: Exclude<Bucket, 'account'>): Promise<LimitDecision> {
      return new Promise<LimitDecision>((resolve, reject) => {
        if (waiting.size === 0) setImmediate(flush);
        const list = waiting.get(accountId);
        const pending = { tokenId, bucket, resolve, reject };
        if (list) list.push(pending);
        else waiting.set(accountId, [pending]);
      });
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * A client's network, the unit failures and requests are counted under (the Bull Board's logins, the
 * dashboard's sign-ins): an IPv4 address as it is (also when IPv4-mapped), an IPv6
 * address by its /64, since one host commonly holds a whole /64 and could otherwise rotate through it.
 */
export function clientNetwork(ip: string | undefined): string {
  const bare = (ip ?? '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1]!;
  if (isIP(bare) === 4) return bare;
  if (isIP(bare) !== 6) return 'unknown';
  const [head = '', tail] = bare.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
