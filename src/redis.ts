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
