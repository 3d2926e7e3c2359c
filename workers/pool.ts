import type { WorkerOptions } from 'bullmq';
import type { z } from 'zod';
import type { JobDef, JobMap, QueueDef } from '../src/jobs/registry.js';
import { retiredSweepsOf, sweepsOf } from '../src/jobs/sweep.js';
import type { Deps } from '../src/deps.js';
import { defineProcessor, type JobContext, type JobResult, type Processor } from './create-worker.js';

/** What a pool does with one job of its queue, given the payload parsed by the job's schema. */
export type Handler<J extends JobDef> = (payload: z.output<J['payload']>, ctx: JobContext) => Promise<JobResult>;

/** One handler for each job of a queue, under the job's name in the queue's map: a job without one does not compile. */
export type Handlers<Jobs extends JobMap> = { [K in keyof Jobs]: Handler<Jobs[K]> };

export interface PoolSpec<Q extends QueueDef> {
  handlers: Handlers<Q['jobs']>;
  /** Worker options: the concurrency of the pool's *_CONCURRENCY setting, and the lease of a job the agent waits on. */
  options(deps: Deps): Partial<WorkerOptions>;
}

/** One worker pool: the queue it runs, its handlers, its worker options and its start-up work. */
export interface Pool<Q extends QueueDef = QueueDef> extends PoolSpec<Q> {
  queue: Q;
  /** The handlers in createWorker's shape, one per job of the queue. */
  processors: Processor[];
  /**
   * Removes the schedulers of the queue's retired sweeps and registers its repeating jobs (its sweeps).
   * Runs at start and again while the pool runs (workers/main.ts), so it is harmless to repeat.
   */
  onStart(deps: Deps): Promise<void>;
}

/** The pool of `queue`: the compiler asks for a handler of each of its jobs, and for nothing else. */
export function definePool<Q extends QueueDef>(queue: Q, spec: PoolSpec<Q>): Pool<Q> {
  // Each handler takes its own job's payload; createWorker parses it with that job's schema before the call.
  const handlers = spec.handlers as unknown as Record<string, Handler<JobDef> | undefined>;
  // The compiler's check again, for a map typed loosely: a job without a handler, a handler without a job.
  const unhandled = Object.entries(queue.jobs).filter(([key]) => typeof handlers[key] !== 'function');
  if (unhandled.length) throw new Error(`pool ${queue.name}: no handler for ${unhandled.map(([, j]) => j.name).join(', ')}`);
  const strays = Object.keys(handlers).filter((key) => !(key in queue.jobs));
  if (strays.length) throw new Error(`pool ${queue.name}: handlers for jobs the queue does not have: ${strays.join(', ')}`);
  const processors = Object.entries(queue.jobs).map(([key, job]) => defineProcessor({ job, run: handlers[key]! }));
  const sweeps = sweepsOf(queue.jobs);
  const retired = retiredSweepsOf(queue.jobs);
  return {
    ...spec,
    queue,
    processors,
    async onStart(deps) {
      for (const old of retired) await old.retire(deps);
      if (queue.formerly) for (const sweep of sweeps) await retireUnderFormerName(deps, queue.formerly, sweep.key({}));
      for (const sweep of sweeps) await sweep.schedule(deps);
    },
  };
}

/**
 * A renamed queue's sweep keeps its scheduler id but is scheduled on the new name; the scheduler a process
 * of the old release registered under the old name is removed (it may register it again until it stops;
 * every check of a new process removes it again). Runs of it already queued there are still processed.
 */
async function retireUnderFormerName(deps: Deps, formerly: string, schedulerId: string): Promise<void> {
  const queue = deps.queues.get(formerly);
  if (!queue || !(await queue.getJobScheduler(schedulerId))) return;
  await queue.removeJobScheduler(schedulerId);
  deps.logger.info({ queue: formerly, scheduler: schedulerId }, 'repeating job of a renamed queue removed from its former name');
}

/**
 * The lease of a job the agent waits on: a drain holds the account's turns (the jobs behind it found the
 * account busy and left it to that drain) and a webhook event hand-over holds accepted events. A killed
 * worker's lease runs out within AGENT_TURN_LOCK_MS (BullMQ renews it every half of that while the job
 * runs) and the next stall check, every AGENT_TURN_STALLED_INTERVAL_MS, gives the job to a live worker:
 * seconds, not the half minute to a minute of BullMQ's defaults. Both jobs are safe to run again (the
 * turns and deliveries live in Postgres, a turn's claims are counted), so a job that stalls again (its
 * second worker killed too) is run again up to STALLS_BEFORE_FAILED times rather than failed at once.
 */
const STALLS_BEFORE_FAILED = 5;
export const agentLease = (deps: Deps): Partial<WorkerOptions> => ({
  lockDuration: deps.config.agent.turnLockMs,
  stalledInterval: deps.config.agent.turnStalledIntervalMs,
  maxStalledCount: STALLS_BEFORE_FAILED,
});
