import { Cluster, Redis as Single, type RedisOptions } from 'ioredis';

/** A client of the deployment's Redis: one server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type Redis = Single | Cluster;

/** Where the deployment's Redis is; a Config is one. */
export interface RedisTarget {
  redisUrl: string;
  /** Startup nodes of a Redis Cluster; null: the one Redis at redisUrl. */
  redisClusterNodes: readonly { host: string; port: number; tls?: boolean }[] | null;
  /** AUTH for every node of the cluster (REDIS_URL carries its own); null or absent: none. */
  redisClusterAuth?: { username?: string; password: string } | null;
  /** A producer's command and connect timeout (REDIS_COMMAND_TIMEOUT_MS); absent: 2 s. */
  redisCommandTimeoutMs?: number;
}

/**
 * What every connection to a cluster node needs: AUTH when the target has a password, TLS when its nodes
 * are `rediss://` (verified against the system's CAs and NODE_EXTRA_CA_CERTS, as any Node TLS client).
 */
export const clusterNodeOptions = (t: RedisTarget): RedisOptions => ({
  ...(t.redisClusterAuth ? { username: t.redisClusterAuth.username, password: t.redisClusterAuth.password } : {}),
  ...(t.redisClusterNodes?.some((n) => n.tls) ? { tls: {} } : {}),
});

/** The nodes written back as REDIS_CLUSTER_NODES takes them (`rediss://` on each for TLS). */
export const clusterNodesSetting = (nodes: NonNullable<RedisTarget['redisClusterNodes']>) =>
  nodes.map((n) => `${n.tls ? 'rediss://' : ''}${n.host}:${n.port}`).join(',');

/** The startup nodes as the cluster client takes them. */
export const startupNodes = (nodes: NonNullable<RedisTarget['redisClusterNodes']>) => nodes.map(({ host, port }) => ({ host, port }));

export const isCluster = (redis: Redis): redis is Cluster => redis instanceof Cluster;

const target = (t: string | RedisTarget): RedisTarget => (typeof t === 'string' ? { redisUrl: t, redisClusterNodes: null } : t);

const retry = (times: number) => Math.min(times * 200, 2_000);

/**
 * `producer`: API-side commands fail fast when Redis is away (BullMQ's production guide), so a write
 * can answer 503 at once. `worker`: BullMQ workers block and must retry forever.
 * On a cluster the same options go to every node's connection (BullMQ reads maxRetriesPerRequest
 * there); the cluster client follows MOVED/ASK, refreshes its slot map after a failover and retries a
 * command whose node went away (ioredis' retryDelayOnFailover × maxRedirections, about 1.6 s).
 */
export function createRedis(where: string | RedisTarget, role: 'producer' | 'worker', extra: RedisOptions = {}): Redis {
  const t = target(where);
  const { redisUrl, redisClusterNodes } = t;
  const timeout = t.redisCommandTimeoutMs ?? 2_000;
  const options: RedisOptions =
    role === 'producer'
      ? { maxRetriesPerRequest: 1, commandTimeout: timeout, connectTimeout: timeout }
      : { maxRetriesPerRequest: null, enableReadyCheck: false };
  const offline = role === 'worker';
  let client: Redis;
  if (redisClusterNodes) {
    const { retryStrategy: _r, enableOfflineQueue: _o, ...rest } = extra;
    client = new Cluster(startupNodes(redisClusterNodes), {
      enableOfflineQueue: offline,
      clusterRetryStrategy: retry,
      redisOptions: { ...options, ...rest, ...clusterNodeOptions(t) },
    });
  } else client = new Single(redisUrl, { enableOfflineQueue: offline, retryStrategy: retry, ...options, ...extra });
  // Connection errors surface on the commands that need Redis; an unhandled 'error' event would crash.
  client.on('error', () => {});
  return client;
}

/**
 * A connection for SUBSCRIBE that reports every break in it ('close', then 'ready' once back). On one
 * Redis it is a worker connection. On a cluster it is a plain connection to one node (a PUBLISH on
 * any node reaches subscribers on every node): a cluster client would move its subscription to
 * another node after a failover without telling, so a listener could not know what it missed. When
 * its node is gone it reconnects to the next node it knows of (the configured ones, then those the
 * cluster client `peers` has seen), and subscribes again there.
 */
export function createSubscriber(where: RedisTarget, connectionName: string, peers?: Redis): Single {
  if (!where.redisClusterNodes) return createRedis(where, 'worker', { connectionName }) as Single;
  const configured = startupNodes(where.redisClusterNodes);
  const known = () => {
    const seen = peers && isCluster(peers) ? peers.nodes('all').map((n) => ({ host: n.options.host!, port: n.options.port! })) : [];
    return [...configured, ...seen.filter((s) => !configured.some((c) => c.host === s.host && c.port === s.port))];
  };
  let next = 1;
  const sub: Single = new Single({
    ...configured[0],
    ...clusterNodeOptions(where),
    connectionName,
    maxRetriesPerRequest: null,
    enableReadyCheck: false,
    retryStrategy: (times) => {
      const nodes = known();
      const node = nodes[next++ % nodes.length]!;
      // The connector reads host and port from these options on each attempt.
      sub.options.host = node.host;
      sub.options.port = node.port;
      return Math.min(times * 100, 1_000);
    },
  });
  sub.on('error', () => {});
  return sub;
}

/** The keyspace for our own (non-BullMQ) keys, derived from the queue prefix: `{gas}` → `gas`. */
export function keyspace(queuePrefix: string): string {
  return queuePrefix.replace(/[{}]/g, '');
}

/** Resolves once the connection is ready, or after `ms` (a fail-fast client then answers 503s). */
export function whenReady(client: Redis, ms = 3_000): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    client.once('ready', onReady);
  });
}

/** Opens a fail-fast connection for one job (the admin CLI's), waits briefly for it, and closes it after. */
export async function withRedis<T>(where: string | RedisTarget, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = createRedis(where, 'producer');
  try {
    await whenReady(redis);
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * A fixed-window counter as one Lua call (KEYS[1] the counter, ARGV[1] the window in ms): counts one, starts
 * the window on the first count, and answers `{count, ms left in the window}`. Per-client limits of the public
 * doors and the board's wrong-login count use it.
 */
export const FIXED_WINDOW_COUNT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;

const FIXED_WINDOW_BLOCKED = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n < tonumber(ARGV[1]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
return ttl
`;

/** Whole seconds (at least 1) of a time left in milliseconds, as `Retry-After` states it. */
export const wholeSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * Seconds until a fixed-window count (FIXED_WINDOW_COUNT's key) of `max` or more expires; 0 while it is under
 * `max`. The Bull Board's wrong-login guard and the dashboard's sign-in guard read their counts with it.
 */
export async function fixedWindowBlockedFor(redis: Redis, key: string, max: number): Promise<number> {
  const ms = Number(await redis.eval(FIXED_WINDOW_BLOCKED, 1, key, max));
  return ms > 0 ? wholeSeconds(ms) : 0;
}
