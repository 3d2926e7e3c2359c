import { keyspace, type Redis } from '../redis.js';

/**
 * Whether a click through a tracked link is counted, decided in Redis in one atomic script, so every
 * API process agrees (docs/decisions/links.md):
 * - `repeat`: the same browser (the keyed hash of its address, User-Agent and kind) followed this link
 *   within the repeat window: the first visit's id is answered and nothing is written.
 * - `limited`: the account's visits from this client network, or this link's visits, reached their
 *   hourly limit: the reader is redirected, nothing is written or counted.
 * - `new`: count it; the visit id is remembered for the window (claimed before the visit is written,
 *   so a burst of one browser's clicks counts once however they interleave).
 * Every key carries the account's hash tag: one call touches one slot of a Redis Cluster.
 * KEYS: the browser's mark, the network's count, the link's count. ARGV: the new visit id, the repeat
 * window (ms, 0: none), the network's limit, the link's limit, the limits' window (ms).
 */
const GATE = `
if ARGV[2] ~= '0' then
  local seen = redis.call('GET', KEYS[1])
  if seen then return {'repeat', seen} end
end
local net = tonumber(redis.call('GET', KEYS[2]) or '0')
local code = tonumber(redis.call('GET', KEYS[3]) or '0')
if net >= tonumber(ARGV[3]) or code >= tonumber(ARGV[4]) then return {'limited', ''} end
for i = 2, 3 do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
end
if ARGV[2] ~= '0' then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return {'new', ARGV[1]}
`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

const HOUR_MS = 60 * 60 * 1000;

export type GateAnswer = { outcome: 'new' | 'repeat'; visitId: string } | { outcome: 'limited' };

export interface GateKeys {
  accountId: string;
  code: string;
  /** Keyed hash of the browser: its address, User-Agent and whether it is a bot. */
  browser: string;
  /** Keyed hash of its client network. */
  network: string;
}

type Evaluator = Redis & {
  gasLinkGate(k1: string, k2: string, k3: string, ...args: (string | number)[]): Promise<[string, string]>;
  gasLinkRelease(k1: string, visitId: string): Promise<number>;
};

export function visitGate(
  redis: Redis,
  queuePrefix: string,
  limits: { repeatWindowMs: number; clientPerHour: number; codePerHour: number },
) {
  // Defined once per connection: sent as EVALSHA, so the script's text travels once.
  if (!('gasLinkGate' in redis)) {
    redis.defineCommand('gasLinkGate', { numberOfKeys: 3, lua: GATE });
    redis.defineCommand('gasLinkRelease', { numberOfKeys: 1, lua: RELEASE });
  }
  const r = redis as Evaluator;
  const ks = keyspace(queuePrefix);
  const browserKey = (k: GateKeys) => `${ks}:lv:{${k.accountId}}:b:${k.code}:${k.browser}`;
  return {
    async pass(k: GateKeys, visitId: string): Promise<GateAnswer> {
      const [outcome, id] = await r.gasLinkGate(
        browserKey(k),
        `${ks}:lv:{${k.accountId}}:n:${k.network}`,
        `${ks}:lv:{${k.accountId}}:c:${k.code}`,
        visitId,
        limits.repeatWindowMs,
        limits.clientPerHour,
        limits.codePerHour,
        HOUR_MS,
      );
      if (outcome === 'limited') return { outcome };
      return { outcome: outcome === 'repeat' ? 'repeat' : 'new', visitId: id };
    },
    /** Forgets a claimed visit that could not be written, so the browser's next click is counted. */
    async release(k: GateKeys, visitId: string): Promise<void> {
      await r.gasLinkRelease(browserKey(k), visitId);
    },
  };
}
