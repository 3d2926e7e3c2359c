import { Queue, type JobsOptions } from 'bullmq';
import type { z } from 'zod';
import type { Redis } from '../redis.js';

/** Every worker pool is one BullMQ queue; the names are the pool names operators pass to --pools. */
export const QUEUES = ['agent-turns', 'mail-sends', 'card-timers', 'webhook-events', 'workflow-runs', 'maintenance'] as const;
export type QueueName = (typeof QUEUES)[number];

export interface JobDef<P extends z.ZodType = z.ZodType> {
  queue: QueueName | string;
  name: string;
  payload: P;
  options: JobsOptions;
  /** One line for Bull Board and the README: what the job does and why running it twice is harmless. */
  description: string;
}

/** One job contract: queue, name, payload schema and retry policy, defined once (STYLE.md). */
export function defineJob<P extends z.ZodType>(def: JobDef<P>): JobDef<P> {
  if (def.name.includes(':')) throw new Error(`job name ${def.name} must not contain ':'`);
  return def;
}

export type QueueSet = Map<string, Queue>;

/** Producer-side queues sharing one fail-fast connection. */
export function createQueues(connection: Redis, prefix: string, names: readonly string[] = QUEUES): QueueSet {
  return new Map(
    names.map((name) => {
      const queue = new Queue(name, { connection, prefix });
      // Redis outages surface as failed enqueues (→ 503/502); the emitter's copy is noise.
      queue.on('error', () => {});
      return [name, queue];
    }),
  );
}

/**
 * Adds a job after the row it names is committed. `jobId` must be deterministic so a repeat enqueue
 * (the sweeper, a retried request) is a no-op in BullMQ; ids may not contain ':'.
 */
export async function enqueue<P extends z.ZodType>(
  queues: QueueSet,
  job: JobDef<P>,
  payload: z.input<P>,
  opts: { jobId: string; delay?: number },
): Promise<void> {
  if (opts.jobId.includes(':')) throw new Error(`jobId ${opts.jobId} must not contain ':'`);
  const queue = queues.get(job.queue);
  if (!queue) throw new Error(`queue ${job.queue} is not open in this process`);
  await queue.add(job.name, job.payload.parse(payload), { ...job.options, jobId: opts.jobId, delay: opts.delay });
}

/**
 * `enqueue` for several jobs of one contract, sent together: each is its own `add`, answered by
 * position (null, or the Error of that job's add). Not BullMQ's addBulk: that builds an ioredis
 * pipeline, which copies every script the connection knows (BullMQ's ~60) onto a new object, several
 * times the CPU of the adds themselves for the small batches intake gathers.
 */
export async function enqueueMany<P extends z.ZodType>(queues: QueueSet, job: JobDef<P>, jobs: { payload: z.input<P>; jobId: string }[]): Promise<(null | Error)[]> {
  return Promise.all(
    jobs.map((j) =>
      enqueue(queues, job, j.payload, { jobId: j.jobId }).then(
        () => null,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      ),
    ),
  );
}

export async function closeQueues(queues: QueueSet): Promise<void> {
  await Promise.all([...queues.values()].map((q) => q.close()));
}
