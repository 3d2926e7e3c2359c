import type { Worker } from 'bullmq';
import { JOBS } from '../src/jobs/catalog.js';
import { QUEUES, type QueueName } from '../src/jobs/registry.js';
import { createRedis } from '../src/redis.js';
import type { Runtime } from '../src/runtime.js';
import { createWorker } from './create-worker.js';
import { POOL_SETUP } from './pool-setup.js';
import { PROCESSORS } from './processors.js';

export interface Pools {
  started: QueueName[];
  idle: QueueName[];
  /** Stops taking jobs and waits for the ones in flight, then closes the connection. */
  close(): Promise<void>;
}

/** Reads `--pools a,b` (default: every pool); an unknown pool name is refused. */
export function parsePools(list: string | undefined): QueueName[] {
  if (!list) return [...QUEUES];
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(QUEUES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown pool ${unknown.join(', ')}; pools are ${QUEUES.join(', ')}`);
  return names as QueueName[];
}

/** Starts one worker per named pool that has jobs in the catalog. */
export async function startPools(rt: Runtime, names: QueueName[]): Promise<Pools> {
  const connection = createRedis(rt.config.redisUrl, 'worker');
  const workers: Worker[] = [];
  const started: QueueName[] = [];
  const idle: QueueName[] = [];
  for (const name of names) {
    if (!JOBS.some((j) => j.queue === name)) {
      idle.push(name);
      continue;
    }
    workers.push(createWorker(name, PROCESSORS, JOBS, { rt, connection, options: POOL_SETUP[name]?.options?.(rt) }));
    started.push(name);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  for (const name of started) await POOL_SETUP[name]?.onStart?.(rt);
  rt.logger.info({ started, idle }, 'worker pools running');
  return {
    started,
    idle,
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      connection.disconnect();
    },
  };
}
