import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { compareLiveIds, type LiveEntry, liveKeys, parseLiveMessage } from '../queue-version/live-events.js';
import { createSubscriber, keyspace, type Redis } from '../redis.js';

/**
 * The reading side of the review queue's live events (docs/dashboard.md, "Live updates"). One subscriber
 * connection per process listens on the channels of the accounts with an open stream; each stream first
 * gets what it missed since its `Last-Event-ID` from the account's Redis stream, then the live events.
 * Open streams are leases in Redis (per session and per account, over every process), renewed at each
 * heartbeat, so a process that dies frees its streams' places within three heartbeats.
 */

/** What an open stream is told. */
export interface LiveSink {
  /** An event, with its id (the `Last-Event-ID` to resume after). */
  event(entry: LiveEntry): void;
  /** The backlog no longer reaches back to the reader's last event: reload the queue, then follow from `id`. */
  resync(id: string | null): void;
  /** The stream is open and caught up; `id` is the newest event so far (a reconnect resumes after it), null when there is none. */
  ready(id: string | null): void;
  /** A heartbeat (a comment line for proxies). */
  heartbeat(): void;
  /** The stream is over (session ended, subscriber connection lost, hub closed): end the response. */
  end(why: 'session' | 'connection' | 'closing'): void;
}

export interface OpenStream {
  accountId: string;
  /** The session's row id (never its cookie value): the per-session cap counts by it. */
  sessionId: string;
  lastEventId: string | null;
  sink: LiveSink;
  /** Asked at each heartbeat; false ends the stream (the session was signed out or expired). */
  sessionLive(): Promise<boolean>;
  /** Called once the stream has its place, before anything is told to the sink (the HTTP response sends its headers). */
  onOpen?(): void;
}

export type OpenResult = { ok: true; close(): Promise<void> } | { ok: false; retryAfterSeconds: number; limit: 'session' | 'account' };

/**
 * KEYS[1] the account's open streams, KEYS[2] the session's (sorted sets of stream ids scored by lease end, ms
 * Redis time). ARGV: stream id, lease ms, account cap, session cap. Drops expired leases, then takes a place
 * in both or in neither: 1 taken, -1 the session is full, -2 the account is full. ARGV[3] = 0: a renewal.
 */
const LEASE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if tonumber(ARGV[3]) > 0 and redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -2 end
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl + 1000)
redis.call('PEXPIRE', KEYS[2], ttl + 1000)
return 1
`;

type Leasing = Redis & {
  gasLiveLease(account: string, session: string, id: string, ttl: number, accountCap: number, sessionCap: number): Promise<number>;
};

const leaseKeys = (ks: string, accountId: string, sessionId: string) => ({
  account: `${ks}:live:{${accountId}}:open`,
  session: `${ks}:live:{${accountId}}:open:${sessionId}`,
});

export interface LiveHub {
  open(stream: OpenStream): Promise<OpenResult>;
  /** Open streams in this process. */
  size(): number;
  close(): Promise<void>;
}

let counter = 0;

export function createLiveHub(deps: { config: Config; redis: Redis; logger: Logger }): LiveHub {
  const { config } = deps;
  const limits = config.liveUpdates;
  const ks = keyspace(config.queuePrefix);
  const redis = deps.redis as Leasing;
  if (!('gasLiveLease' in redis)) deps.redis.defineCommand('gasLiveLease', { numberOfKeys: 2, lua: LEASE_LUA });
  const leaseMs = limits.heartbeatMs * 3;
  let subscriber: ReturnType<typeof createSubscriber> | null = null;
  /** Open streams by account, each with its message handler; `ready` settles once the channel is subscribed. */
  const listeners = new Map<string, { set: Set<(entry: LiveEntry) => void>; ready: Promise<unknown> }>();
  const ends = new Set<(why: 'connection' | 'closing') => void>();
  let closing = false;

  const sub = () => {
    if (subscriber) return subscriber;
    const s = createSubscriber(config, 'gas-live');
    s.on('message', (channel: string, message: string) => {
      const accountId = /\{([^}]+)\}/.exec(channel)?.[1];
      const entry = parseLiveMessage(message);
      if (!accountId || !entry) return;
      for (const fn of listeners.get(accountId)?.set ?? []) fn(entry);
    });
    // A break in the subscription may have lost events: every stream ends, and its reader resumes from its last id.
    s.on('close', () => {
      for (const end of [...ends]) end('connection');
    });
    subscriber = s;
    return s;
  };

  return {
    size: () => [...listeners.values()].reduce((n, l) => n + l.set.size, 0),

    async open(stream) {
      if (closing) return { ok: false, retryAfterSeconds: 1, limit: 'account' };
      const id = `${process.pid}-${++counter}`;
      const keys = leaseKeys(ks, stream.accountId, stream.sessionId);
      const taken = await redis.gasLiveLease(keys.account, keys.session, id, leaseMs, limits.perAccount, limits.perSession);
      if (taken !== 1)
        return { ok: false, retryAfterSeconds: Math.ceil(limits.heartbeatMs / 1000), limit: taken === -1 ? 'session' : 'account' };

      stream.onOpen?.();
      const { stream: streamKey, channel } = liveKeys(ks, stream.accountId);
      let last = stream.lastEventId;
      let buffered: LiveEntry[] | null = [];
      const deliver = (entry: LiveEntry) => {
        if (buffered) {
          buffered.push(entry);
          return;
        }
        if (last && compareLiveIds(entry.id, last) <= 0) return;
        last = entry.id;
        stream.sink.event(entry);
      };
      let listening = listeners.get(stream.accountId);
      if (!listening) {
        listening = { set: new Set(), ready: sub().subscribe(channel) };
        listeners.set(stream.accountId, listening);
      }
      listening.set.add(deliver);

      let timer: NodeJS.Timeout | null = null;
      let done = false;
      const finish = async (why: 'session' | 'connection' | 'closing' | null) => {
        if (done) return;
        done = true;
        if (timer) clearInterval(timer);
        ends.delete(onEnd);
        const mine = listeners.get(stream.accountId);
        mine?.set.delete(deliver);
        if (mine && !mine.set.size) {
          listeners.delete(stream.accountId);
          await subscriber?.unsubscribe(channel).catch(() => {});
        }
        await redis.zrem(keys.account, id).catch(() => {});
        await redis.zrem(keys.session, id).catch(() => {});
        if (why) stream.sink.end(why);
      };
      const onEnd = (why: 'connection' | 'closing') => void finish(why);
      ends.add(onEnd);

      try {
        await listening.ready;
      } catch (err) {
        await finish(null);
        throw err;
      }
      // Catch-up: what the backlog holds after the reader's last event. The reader's last event is in the backlog
      // unless the cap trimmed it (or Redis lost it): then the backlog no longer reaches it, and the reader reloads.
      const [newest] = (await redis.xrevrange(streamKey, '+', '-', 'COUNT', 1)) as [string, string[]][];
      if (stream.lastEventId) {
        const [oldest] = (await redis.xrange(streamKey, '-', '+', 'COUNT', 1)) as [string, string[]][];
        if (!oldest || compareLiveIds(oldest[0], stream.lastEventId) > 0) {
          last = newest?.[0] ?? null;
          stream.sink.resync(last);
        } else {
          const missed = (await redis.xrange(streamKey, `(${stream.lastEventId}`, '+', 'COUNT', limits.backlogEvents)) as [
            string,
            string[],
          ][];
          for (const [entryId, fields] of missed) {
            const json = fields[fields.indexOf('e') + 1];
            const entry = json ? parseLiveMessage(`${entryId} ${json}`) : null;
            if (!entry) continue;
            last = entry.id;
            stream.sink.event(entry);
          }
        }
      }
      if (!stream.lastEventId) last = newest?.[0] ?? null;
      stream.sink.ready(last);
      const held = buffered;
      buffered = null;
      for (const entry of held) deliver(entry);

      timer = setInterval(() => {
        void (async () => {
          try {
            if (!(await stream.sessionLive())) return finish('session');
            await redis.gasLiveLease(keys.account, keys.session, id, leaseMs, 0, 0);
            stream.sink.heartbeat();
          } catch (err) {
            deps.logger.warn({ err: (err as Error).message }, 'live stream heartbeat failed; ending the stream');
            await finish('connection');
          }
        })();
      }, limits.heartbeatMs);
      timer.unref();
      return { ok: true, close: () => finish(null) };
    },

    async close() {
      closing = true;
      for (const end of [...ends]) end('closing');
      subscriber?.disconnect();
      subscriber = null;
    },
  };
}

/** One hub per process (per Redis client): the API's routes share it; `closeLiveHub` ends its streams at shutdown. */
const hubs = new WeakMap<Redis, LiveHub>();

export function liveHubOf(deps: { config: Config; redis: Redis; logger: Logger }): LiveHub {
  let hub = hubs.get(deps.redis);
  if (!hub) hubs.set(deps.redis, (hub = createLiveHub(deps)));
  return hub;
}

export async function closeLiveHub(redis: Redis): Promise<void> {
  const hub = hubs.get(redis);
  hubs.delete(redis);
  await hub?.close();
}
