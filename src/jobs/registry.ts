import { randomBytes } from 'node:crypto';
import { Queue, type Job, type JobsOptions } from 'bullmq';
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Redis } from '../redis.js';
import { queueTelemetry } from '../tracing/spans.js';
import { FORMER_QUEUES, QUEUES } from './catalog.js';
import { keyOf, type EnqueueArgs, type JobDef, type QueueSet } from './contract.js';

export { defineJob, defineQueue } from './contract.js';
export type { EnqueueArgs, EnqueueOptions, JobDef, JobMap, JobSpec, NoKeyPart, QueueDef, QueueSet } from './contract.js';
export { FORMER_QUEUES, QUEUES, type QueueName } from './catalog.js';

/** Every queue a process opens by default: the catalog's, and for one release the former names of renamed ones. */
export const OPEN_QUEUES: readonly string[] = [...QUEUES, ...FORMER_QUEUES.keys()];

/**
 * Producer-side queues sharing one fail-fast connection. Every job added through them (and every job
 * a scheduler makes from them) keeps its finished record for JOBS_KEEP_*, so the board shows history.
 */
export function createQueues(
  connection: Redis,
  config: Pick<Config, 'queuePrefix' | 'jobs'>,
  names: readonly string[] = OPEN_QUEUES,
): QueueSet {
  const defaultJobOptions: JobsOptions = {
    removeOnComplete: { ...config.jobs.keepCompleted },
    removeOnFail: { ...config.jobs.keepFailed },
  };
  return new Map(
    names.map((name) => {
      // With tracing on, each add carries its trace context in the job (bullmq-otel).
      const queue = new Queue(name, { connection, prefix: config.queuePrefix, defaultJobOptions, telemetry: queueTelemetry() });
      // Redis outages surface as failed enqueues (→ 503/502); the emitter's copy is noise.
      queue.on('error', () => {});
      return [name, queue];
    }),
  );
}

/**
 * Adds a job after the row it names is committed. Its contract's `jobId` rule makes a deterministic key
 * from the payload (and `opts`' key part): while a job under it waits, is delayed or runs, a repeat
 * enqueue (the sweeper, a retried request) is a no-op. Once that job finished, the key is free and the
 * next enqueue adds a new job, although the finished one is kept for the board. That is BullMQ's
 * deduplication (its key is dropped when the job completes or finally fails), not its jobId: a kept
 * job's id would swallow every later add. The BullMQ id is the key plus a random suffix. Keys may not
 * contain ':'. Answers the BullMQ id of the job holding the key.
 */
export async function enqueue<P extends z.ZodType, X extends object>(
  queues: QueueSet,
  job: JobDef<P, X>,
  payload: z.input<P>,
  ...[opts]: EnqueueArgs<X>
): Promise<string> {
  const data = job.payload.parse(payload);
  const key = keyOf(job, data, opts);
  const queue = queues.get(job.queue);
  if (!queue) throw new Error(`queue ${job.queue} is not open in this process`);
  const added = await queue.add(job.name, data, {
    ...job.options,
    jobId: `${key}-${randomBytes(4).toString('hex')}`,
    deduplication: { id: key },
    delay: opts?.delay,
  });
  return added.id!;
}

/** The job waiting, delayed or running under an enqueue key; undefined once it finished (or was lost). */
export async function pendingJob(queue: Queue, key: string): Promise<Job | undefined> {
  const id = await queue.getDeduplicationJobId(key);
  return id ? queue.getJob(id) : undefined;
}

/**
 * `enqueue` for several jobs of one contract whose key is the payload alone, sent together: each is its
 * own `add`, answered by position (null, or the Error of that job's add). Not BullMQ's addBulk: that
 * builds an ioredis pipeline, which copies every script the connection knows (BullMQ's ~60) onto a new
 * object, several times the CPU of the adds themselves for the small batches intake gathers.
 */
export async function enqueueMany<P extends z.ZodType>(
  queues: QueueSet,
  job: JobDef<P>,
  payloads: z.input<P>[],
): Promise<(null | Error)[]> {
  return Promise.all(
    payloads.map((payload) =>
      enqueue(queues, job, payload).then(
        () => null,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      ),
    ),
  );
}

export async function closeQueues(queues: QueueSet): Promise<void> {
  await Promise.all([...queues.values()].map((q) => q.close()));
}
