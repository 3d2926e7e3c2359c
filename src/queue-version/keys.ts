/**
 * The account's review-queue version in Redis (docs/decisions/stores.md, "Reads that skip Postgres"). Every card
 * write bumps it twice: before its statement (`pre`: the counter moves on and the write is marked in
 * flight) and after its commit (`post`: the counter moves on again and the mark is removed). The rate
 * limiter's script, which every API request runs anyway, reads it beside the auth-guard epoch and tells
 * the API process whether a page it cached is still the page Postgres would give. Both keys carry the
 * account's hash tag, as the limiter's and the auth guard's keys do: one script, one Cluster slot.
 */
export function queueVersionKeys(keyspace: string, accountId: string): { counter: string; writing: string } {
  return { counter: `${keyspace}:rv:{${accountId}}`, writing: `${keyspace}:rv:{${accountId}}:writing` };
}

/** What a reader learns of the account's queue from one limiter call. */
export interface QueueVersion {
  /** `epoch:counter`: a new epoch when Redis lost its data, a new counter after every card write. */
  key: string;
  /** No card write of the account is in flight (pre-bumped, not yet post-bumped, deadline not passed). */
  clean: boolean;
}

/**
 * How long a write stays "in flight" when its post-bump never comes (its process died between commit
 * and bump, or Redis was out of reach): readers neither use nor fill the page cache meanwhile.
 */
export const WRITE_DEADLINE_MS = 60_000;

/** The longest a page stays in a process's cache, whatever the versions say: the last line of defence. */
export const PAGE_MAX_AGE_MS = 60_000;

/**
 * A counter made when missing starts at Redis's clock in microseconds, so a counter lost and made again
 * never repeats a value an earlier one reached (at fewer than a million writes a second). The same Lua
 * serves the writers' script and the limiter's.
 */
export const COUNTER_INIT_LUA = `
local function counterInit(t)
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
`;

/**
 * Writers' scripts. KEYS[1] the counter, KEYS[2] the in-flight marks (a sorted set of write ids scored
 * by their deadline in ms, Redis time). `pre`: ARGV[1] the write id, ARGV[2] its deadline from now;
 * drops expired marks, adds this one, bumps the counter. `post`: ARGV[1] the write id; bumps the
 * counter and removes the mark. The set expires after its latest deadline, so nothing is left behind.
 */
export const PRE_BUMP_LUA = `${COUNTER_INIT_LUA}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ttl + 1000)
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], counterInit(t)) end
return redis.call('INCR', KEYS[1])
`;

export const POST_BUMP_LUA = `${COUNTER_INIT_LUA}
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], counterInit(redis.call('TIME'))) end
redis.call('INCR', KEYS[1])
return redis.call('ZREM', KEYS[2], ARGV[1])
`;
