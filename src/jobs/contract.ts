import type { JobsOptions, Queue } from 'bullmq';
import type { z } from 'zod';

/** A process's open queues by name (createQueues in registry.ts makes them). */
export type QueueSet = Map<string, Queue>;

/** A rule whose key is the payload alone takes no key part in enqueue's options. */
export type NoKeyPart = Record<never, never>;

/** Options of one enqueue: a delay, and the part of the key the payload does not carry (the contract's `X`). */
export type EnqueueOptions<X extends object> = X & { delay?: number };
/** Enqueue's options may be left out only when the contract's key needs nothing beyond the payload. */
export type EnqueueArgs<X extends object> = NoKeyPart extends X ? [opts?: EnqueueOptions<X>] : [opts: EnqueueOptions<X>];

/** What a queue file (src/jobs/<queue>.ts) declares for one job; `defineJob` adds `key`. */
export interface JobSpec<P extends z.ZodType = z.ZodType, X extends object = NoKeyPart, Q extends string = string> {
  /** The queue (and pool) the job runs on: the name of the queue file's `defineQueue`. */
  queue: Q;
  name: string;
  payload: P;
  /**
   * Retries and backoff. Retention is the queues' (JOBS_KEEP_*), not the job's: BullMQ trims a
   * queue's whole completed or failed set to the finishing job's limits, so a smaller limit on one
   * job would cut the others' history. Only `removeOnComplete: true` (remove just this job) is safe.
   */
  options: Omit<JobsOptions, 'removeOnComplete' | 'removeOnFail' | 'jobId' | 'deduplication'> & { removeOnComplete?: true };
  /** One line for Bull Board and the README: what the job does and why running it twice is harmless. */
  description: string;
  /**
   * The job's key rule, the one place its keys are built: the deduplication key `enqueue` passes to
   * BullMQ, and for a job a BullMQ job scheduler makes, the scheduler's id. From the parsed payload,
   * plus `part`: what the rule needs that the payload does not carry, given in enqueue's options.
   * A key never contains ':'.
   */
  jobId(payload: z.output<P>, part: X): string;
}

export interface JobDef<P extends z.ZodType = z.ZodType, X extends object = NoKeyPart, Q extends string = string> extends JobSpec<P, X, Q> {
  /** The key `enqueue` uses for this payload (and key part): tests and schedulers ask here, never build one. */
  key(payload: z.input<P>, ...opts: EnqueueArgs<X>): string;
}

/** The key of an already parsed payload; refuses a key with ':' (BullMQ cannot take it). */
export function keyOf<P extends z.ZodType, X extends object>(
  job: JobSpec<P, X, string>,
  data: z.output<P>,
  opts: EnqueueOptions<X> | undefined,
): string {
  const key = job.jobId(data, (opts ?? {}) as X);
  if (key.includes(':')) throw new Error(`jobId ${key} must not contain ':'`);
  return key;
}

/** One job contract: queue, name, payload schema, key rule and retry policy, defined once (docs/rules.md, "One queue definition"). */
export function defineJob<P extends z.ZodType, X extends object = NoKeyPart, Q extends string = string>(
  spec: JobSpec<P, X, Q>,
): JobDef<P, X, Q> {
  if (spec.name.includes(':')) throw new Error(`job name ${spec.name} must not contain ':'`);
  return { ...spec, key: (payload, ...[opts]) => keyOf(spec, spec.payload.parse(payload), opts) };
}

/** A queue's jobs, under the names producers import them by; every one runs on that queue. */
export type JobMap<Q extends string = string> = Record<string, JobDef<z.ZodType, NoKeyPart, Q>>;

/** One queue (one worker pool): its name and its jobs. Its pool (workers/<queue>.ts) must handle each job. */
export interface QueueDef<Q extends string = string, J extends JobMap<Q> = JobMap<Q>> {
  name: Q;
  jobs: J;
  /**
   * The queue's name in the release before it was renamed, kept for one release: its pool also takes
   * the jobs left under that name (and those a process of the old release still adds there during a
   * rolling deploy), and removes the old name's schedulers at start. Producers use `name` only.
   */
  formerly?: string;
}

/**
 * Declares a queue from its jobs. The compiler refuses a job of another queue here, and the pool of the
 * queue must name a handler for each of these jobs (workers/pool.ts).
 */
export function defineQueue<Q extends string, J extends JobMap<Q>>(name: Q, jobs: J, opts: { formerly?: string } = {}): QueueDef<Q, J> {
  const strays = Object.values(jobs).filter((j) => j.queue !== name);
  if (strays.length) throw new Error(`queue ${name}: ${strays.map((j) => `${j.name} runs on ${j.queue}`).join(', ')}`);
  return opts.formerly ? { name, jobs, formerly: opts.formerly } : { name, jobs };
}
