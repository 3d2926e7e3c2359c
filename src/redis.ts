import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

/**
 * `producer`: API-side commands fail fast when Redis is away (BullMQ's production guide), so a write
 * can answer 503 at once. `worker`: BullMQ workers block and must retry forever.
 */
export function createRedis(url: string, role: 'producer' | 'worker', extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: 2_000,
          connectTimeout: 2_000,
          retryStrategy: (times) => Math.min(times * 200, 2_000),
        }
      : { maxRetriesPerRequest: null, enableReadyCheck: false, retryStrategy: (times) => Math.min(times * 200, 2_000) };
  const client = new Redis(url, { ...options, ...extra });
  // Connection errors surface on the commands that need Redis; an unhandled 'error' event would crash.
  client.on('error', () => {});
  return client;
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
export async function withRedis<T>(url: string | { redisUrl: string }, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = createRedis(typeof url === 'string' ? url : url.redisUrl, 'producer');
  try {
    await whenReady(redis);
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}
