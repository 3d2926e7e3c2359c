import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { closeQueues, createQueues } from '../jobs/registry.js';
import { createLogger } from '../logger.js';
import { withRedis } from '../redis.js';
import type { IntakeDeps } from './intake.service.js';

/** Opens what intake needs beside a database handle (the admin CLI has only Postgres), then closes it. */
export async function withIntake<T>(config: Config, db: Db, fn: (deps: IntakeDeps) => Promise<T>): Promise<T> {
  return withRedis(config, async (redis) => {
    const queues = createQueues(redis, config, ['webhook-events']);
    try {
      return await fn({ config, db, redis, queues, logger: createLogger('silent') });
    } finally {
      await closeQueues(queues).catch(() => {});
    }
  });
}
