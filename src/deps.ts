import type { Config } from './config.js';
import { createServiceDb, type Db } from './db.js';
import { createQueues, closeQueues, type QueueSet } from './jobs/registry.js';
import type { Logger } from './logger.js';
import { createRateLimiter, type RateLimiter } from './rate-limit.js';
import { registerCardWrites } from './queue-version/card-writes.js';
import { createRedis, keyspace, whenReady, type Redis } from './redis.js';
import { cursorSecretSource } from './secrets/cursor-secret.js';

/**
 * What one process holds: its settings, logger and connections (Postgres pool, fail-fast Redis, queues,
 * the rate limiter). The one deps type: a function asks for the part it uses (`Pick<Deps, 'db' | 'queues'>`).
 */
export interface Deps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  queues: QueueSet;
  limiter: RateLimiter;
  /** The key that signs list cursors: CURSOR_SECRET, or the deployment's own kept in the database. */
  cursorSecret(): Promise<string>;
  /** Waits (briefly) for the Redis connection, so the first requests do not fail fast for nothing. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createDeps(config: Config, logger: Logger): Deps {
  const db = createServiceDb(config, logger);
  const redis = createRedis(config, 'producer');
  const queues = createQueues(redis, config);
  const limiter = createRateLimiter(redis, keyspace(config.queuePrefix), config.limits);
  // Every card this process writes bumps the account's queue version, and its own cached pages of it go at once.
  registerCardWrites(db, {
    redis,
    keyspace: keyspace(config.queuePrefix),
    logger,
    onWrite: (accountId) => limiter.pages.forget(accountId),
    liveBacklog: config.liveUpdates.backlogEvents,
  });
  return {
    config,
    logger,
    db,
    redis,
    queues,
    limiter,
    cursorSecret: cursorSecretSource(config.cursorSecret, db),
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

async function answers(check: () => Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([check(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)))]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The stores that do not answer within `ms` (Postgres `select 1`, Redis `PING` once connected): what
 * GET /healthz reports and what the workers' heartbeat writes (workers/heartbeat.ts).
 */
export async function unreachableStores(deps: Pick<Deps, 'db' | 'redis'>, ms = 2_000): Promise<('postgres' | 'redis')[]> {
  const [postgres, redis] = await Promise.all([
    answers(() => deps.db.raw('select 1'), ms),
    answers(async () => {
      await whenReady(deps.redis, Math.round(ms * 0.75));
      return deps.redis.ping();
    }, ms),
  ]);
  return [...(postgres ? [] : ['postgres' as const]), ...(redis ? [] : ['redis' as const])];
}
