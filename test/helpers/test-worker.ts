import { QueueEvents } from 'bullmq';
import { createQueues } from '../../src/jobs/registry.js';
import { createRedis } from '../../src/redis.js';
import { createWorker, type Processor } from '../../workers/create-worker.js';
import type { TestEnv } from './env.js';

/**
 * A worker made by createWorker for one test queue and its one processor, on a connection of its own, with the
 * queues to enqueue on and the queue's events; `close` ends all of them.
 */
export function queueWorker(env: TestEnv, processor: Processor) {
  const { queue } = processor.job;
  const connection = createRedis(env.config, 'worker');
  const queues = createQueues(env.deps.redis, env.config, [queue]);
  // From the stream's start, not '$': on a cluster the first XREAD can go out after the job already
  // finished (its slot looked up first), and an event from before it would be missed.
  const events = new QueueEvents(queue, {
    connection: createRedis(env.config, 'worker'),
    prefix: env.config.queuePrefix,
    lastEventId: '0-0',
  });
  const worker = createWorker(queue, [processor], [processor.job], { deps: env.deps, connection });
  return {
    queues,
    events,
    worker,
    async close() {
      await worker.close();
      await events.close();
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}
