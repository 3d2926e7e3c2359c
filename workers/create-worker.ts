import { UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { z } from 'zod';
import type { JobDef } from '../src/jobs/registry.js';
import type { Logger } from '../src/logger.js';
import type { Redis } from '../src/redis.js';
import type { Deps } from '../src/deps.js';
import { exposeExperimentMail, sendWindowHold } from '../src/experiments/variants/send-window.js';
import { experimentAdapter } from '../src/experiments/experiment.adapter.js';
import { registerAdapter } from '../src/channels/registry.js';
import { turnReading } from '../src/agent/core/doors.js';
import type { ShipRules } from '../src/shipping/hold-rule.js';
import { metrics } from '../src/metrics/registry.js';
import { queueTelemetry } from '../src/tracing/spans.js';

/** What a job's handler sees: the process's deps and the shipping path's hold rule (src/shipping/hold-rule.ts). */
export type WorkerDeps = Deps & ShipRules;

export interface JobContext {
  deps: WorkerDeps;
  log: Logger;
  job: Job;
}

/**
 * What every job's handler answers: a short summary of its run (an outcome, counts) that BullMQ keeps as
 * the job's return value, which Bull Board shows and tests read, or nothing. BullMQ stores it as JSON,
 * so it is plain data (no class instances, functions or bigints).
 */
export type JobResult = string | number | boolean | null | undefined | object;

/** A processor for one job contract; `payload` is already parsed by the contract's schema. */
export interface Processor<P extends z.ZodType = z.ZodType> {
  job: JobDef<P>;
  run(payload: z.output<P>, ctx: JobContext): Promise<JobResult>;
}

/** The jobs each worker is running now, with the lock token that lets them be handed back. */
const running = new WeakMap<Worker, Map<string, { job: Job; token: string }>>();

/** How long a job handed back at shutdown waits before another worker may take it. */
export const RETURNED_JOB_DELAY_MS = 5_000;

/**
 * Puts the jobs `worker` is still running back in their queue (their lock released, the attempt not
 * counted), for a shutdown that cannot wait for them any longer. Their processors are not stopped: the
 * process is about to exit. The job is due a few seconds later, when this process is gone with what
 * its processor still holds (an account's turn lock): taken at once, it would find the account busy.
 * Returns the ids handed back; a job whose lock is already gone is left to BullMQ's stalled-job check.
 */
export async function returnRunningJobs(worker: Worker, log: Logger): Promise<string[]> {
  const jobs = [...(running.get(worker)?.values() ?? [])];
  const returned: string[] = [];
  for (const { job, token } of jobs) {
    try {
      await job.moveToDelayed(Date.now() + RETURNED_JOB_DELAY_MS, token);
      returned.push(job.id!);
    } catch (err) {
      log.error(
        { queue: worker.name, jobId: job.id, err: (err as Error).message },
        'job not returned to its queue; the stalled-job check will',
      );
    }
  }
  return returned;
}

export function defineProcessor<P extends z.ZodType>(p: Processor<P>): Processor {
  return p as unknown as Processor;
}

/**
 * One worker for one queue. Refuses to start unless every job the catalog lists for that queue has
 * exactly one processor (immich's start-up check), parses each payload (bad → UnrecoverableError, no
 * retries), and gives each job a child logger. `opts.from`: the BullMQ queue it takes jobs from when that
 * is not `queue` (a renamed queue's former name); its jobs' logs and metrics are labelled with that name.
 */
export function createWorker(
  queue: string,
  processors: Processor[],
  catalog: JobDef[],
  opts: { deps: Deps; connection: Redis; concurrency?: number; options?: Partial<WorkerOptions>; from?: string },
): Worker {
  const expected = catalog.filter((j) => j.queue === queue).map((j) => j.name);
  const byName = new Map<string, Processor>();
  for (const p of processors.filter((p) => p.job.queue === queue)) {
    if (byName.has(p.job.name)) throw new Error(`job ${p.job.name} has two processors`);
    byName.set(p.job.name, p);
  }
  const missing = expected.filter((n) => !byName.has(n));
  if (missing.length) throw new Error(`queue ${queue}: no processor for ${missing.join(', ')}`);
  const unknown = [...byName.keys()].filter((n) => !expected.includes(n));
  if (unknown.length) throw new Error(`queue ${queue}: processors for jobs not in the catalog: ${unknown.join(', ')}`);

  // The composition root of a worker: the shipping path is handed the experiments' send-window hold rule, and the
  // channel registry the experiments' adapter (starting an experiment is a kind of work); review reads a card's turn
  // through the agent's door.
  registerAdapter('experiment', experimentAdapter);
  const deps: WorkerDeps = { ...opts.deps, holdRule: sendWindowHold, onSent: exposeExperimentMail, readTurn: turnReading };
  const name = opts.from ?? queue;
  const inFlight = new Map<string, { job: Job; token: string }>();
  const worker = new Worker(
    name,
    async (job, token) => {
      const processor = byName.get(job.name);
      if (!processor) throw new UnrecoverableError(`no processor for job ${job.name}`);
      const parsed = processor.job.payload.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`bad payload for ${job.name}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      const log = opts.deps.logger.child({ queue: name, job: job.name, jobId: job.id, attempt: job.attemptsMade + 1 });
      if (token && job.id) inFlight.set(job.id, { job, token });
      const end = metrics.jobDuration.startTimer({ queue: name, job: job.name });
      try {
        const result = await processor.run(parsed.data, { deps, log, job });
        end({ outcome: 'completed' });
        return result;
      } catch (err) {
        end({ outcome: 'failed' });
        const retried = !(err instanceof UnrecoverableError) && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
        if (retried) metrics.jobRetries.inc({ queue: name, job: job.name });
        throw err;
      } finally {
        if (job.id) inFlight.delete(job.id);
      }
    },
    {
      concurrency: opts.concurrency ?? 1,
      lockDuration: opts.deps.config.jobs.stalled.lockMs,
      stalledInterval: opts.deps.config.jobs.stalled.checkEveryMs,
      ...opts.options,
      connection: opts.connection,
      prefix: opts.deps.config.queuePrefix,
      autorun: true,
      // With tracing on, each job's span joins the trace its add carried.
      telemetry: queueTelemetry(),
    },
  );
  running.set(worker, inFlight);
  worker.on('failed', (job, err) =>
    opts.deps.logger.warn({ queue: name, job: job?.name, jobId: job?.id, attempt: job?.attemptsMade, err: err.message }, 'job failed'),
  );
  worker.on('stalled', () => metrics.jobsStalled.inc({ queue: name }));
  worker.on('error', (err) => opts.deps.logger.error({ queue: name, err: err.message }, 'worker error'));
  return worker;
}
