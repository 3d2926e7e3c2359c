import type { Config } from '../config.js';
import type { Db } from '../db.js';
import type { QueueSet } from '../jobs/registry.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';

/** What review and mail services need; the API's deps and a worker's runtime both fit. */
export interface ReviewDeps {
  config: Config;
  db: Db;
  queues: QueueSet;
  logger: Logger;
  redis: Redis;
}
