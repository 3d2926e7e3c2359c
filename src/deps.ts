import type { Config } from './config.js';
import { createDb, type Db } from './db.js';
import { createQueues, closeQueues, type QueueSet } from './jobs/registry.js';
import type { Logger } from './logger.js';
import { createRateLimiter, type RateLimiter } from './rate-limit.js';
import { createRedis, keyspace, whenReady, type Redis } from './redis.js';

/** The connections one process holds for producing work: Postgres pool, fail-fast Redis, queues. */
export interface Runtime {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  queues: QueueSet;
  limiter: RateLimiter;
  /** Waits (briefly) for the Redis connection, so the first requests do not fail fast for nothing. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createRuntime(config: Config, logger: Logger): Runtime {
  const db = createDb(config.databaseUrl, config.databasePoolMax, logger);
  const redis = createRedis(config.redisUrl, 'producer');
  const queues = createQueues(redis, config);
  const limiter = createRateLimiter(redis, keyspace(config.queuePrefix), config.limits);
  return {
    config,
    logger,
    db,
    redis,
    queues,
    limiter,
    async ready() {
      await whenReady(redis);
    },
    async close() {
      await closeQueues(queues).catch(() => {});
      redis.disconnect();
      await db.destroy();
    },
  };
}
