import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { defineJob, type JobDef, type JobMap, type NoKeyPart, type QueueSet } from './contract.js';

const noPayload = z.object({});

/** Why `schedule` registered a sweep's scheduler again, or null when it was in place. */
export type ScheduleOutcome = 'missing' | 'interval changed' | 'next run missing' | null;

/** What scheduling a sweep needs of a process: its settings, its queues and its logger. */
export type ScheduleDeps = { config: Config; queues: QueueSet; logger: Logger };

/** A repeating job with an empty payload, run by a BullMQ job scheduler keyed by its scheduler id. */
export interface SweepDef<Q extends string = string> extends JobDef<typeof noPayload, NoKeyPart, Q> {
  /** How often it runs (a setting, or the job's own constant). */
  everyMs(config: Config): number;
  /**
   * Registers its job scheduler every `everyMs`, one per queue however many workers call it. Does
   * nothing when the scheduler is there with that interval and its next run queued, so it may be called
   * again at any time (after Redis lost its data, the scheduler and its next run are gone: it registers
   * it). Logs and returns why it registered it, or null when it was in place.
   */
  schedule(deps: ScheduleDeps): Promise<ScheduleOutcome>;
}

/** A sweep's retries: attempts (at least 1) and the backoff between them. */
export type SweepRetry = Pick<JobsOptions, 'attempts' | 'backoff'>;

/**
 * One repeating sweep: a job whose every step is a conditional update, so overlapping runs are harmless.
 * `schedulerId` is its key and the id of its job scheduler in Redis (never change it: a running system's
 * scheduler is found under it). One attempt unless `retry` says otherwise; removed once complete (the
 * next run is at most `everyMs` away). A retry never holds back the next run: BullMQ queues a
 * scheduler's next run when the current one starts.
 */
export function defineSweep<Q extends string>(spec: {
  queue: Q;
  name: string;
  description: string;
  schedulerId: string;
  everyMs(config: Config): number;
  retry?: SweepRetry;
}): SweepDef<Q> {
  const job = defineJob({
    queue: spec.queue,
    name: spec.name,
    payload: noPayload,
    options: { attempts: 1, ...spec.retry, removeOnComplete: true },
    description: spec.description,
    jobId: () => spec.schedulerId,
  });
  return { ...job, everyMs: spec.everyMs, schedule: (deps) => scheduleRepeating(deps, job, spec.everyMs(deps.config)) };
}

/** The sweeps among a queue's jobs, in the order the queue lists them. */
export function sweepsOf(jobs: JobMap): SweepDef[] {
  return Object.values(jobs).filter((j): j is SweepDef => 'schedule' in j && typeof j.schedule === 'function');
}

/** A sweep that was replaced: its name stays in the catalog so jobs of it still in Redis are processed. */
export interface RetiredSweepDef<Q extends string = string> extends JobDef<typeof noPayload, NoKeyPart, Q> {
  /** Removes its job scheduler (and the scheduler's next run) when Redis still has it; true when it did. */
  retire(deps: ScheduleDeps): Promise<boolean>;
}

/**
 * A sweep that no longer runs on a schedule of its own (it was split, or replaced). Its job name stays
 * defined, so a job of it still in Redis at deploy time (a run already queued, a retry) is processed by
 * the handler its pool gives it rather than failed as unknown; the pool's start removes its scheduler, so
 * no process of the new version runs it again. A process of the old version still running in a rolling
 * deploy may register it again; every new process's schedule check removes it again.
 */
export function defineRetiredSweep<Q extends string>(spec: {
  queue: Q;
  name: string;
  description: string;
  schedulerId: string;
}): RetiredSweepDef<Q> {
  const job = defineJob({
    queue: spec.queue,
    name: spec.name,
    payload: noPayload,
    options: { attempts: 1, removeOnComplete: true },
    description: spec.description,
    jobId: () => spec.schedulerId,
  });
  return {
    ...job,
    async retire(deps) {
      const queue = deps.queues.get(job.queue);
      if (!queue) throw new Error(`${job.queue} queue is not open`);
      if (!(await queue.getJobScheduler(spec.schedulerId))) return false;
      await queue.removeJobScheduler(spec.schedulerId);
      deps.logger.info({ queue: job.queue, scheduler: spec.schedulerId }, 'retired repeating job removed');
      return true;
    },
  };
}

/** The retired sweeps among a queue's jobs. */
export function retiredSweepsOf(jobs: JobMap): RetiredSweepDef[] {
  return Object.values(jobs).filter((j): j is RetiredSweepDef => 'retire' in j && typeof j.retire === 'function');
}

async function scheduleRepeating(deps: ScheduleDeps, job: JobDef<typeof noPayload>, everyMs: number): Promise<ScheduleOutcome> {
  const queue = deps.queues.get(job.queue);
  if (!queue) throw new Error(`${job.queue} queue is not open`);
  const id = job.key({});
  const current = await queue.getJobScheduler(id);
  const why = !current
    ? 'missing'
    : current.every !== everyMs
      ? 'interval changed'
      : !current.next || !(await queue.getJob(`repeat:${id}:${current.next}`))
        ? 'next run missing'
        : null;
  if (!why) return null;
  await queue.upsertJobScheduler(id, { every: everyMs }, { name: job.name, data: {}, opts: job.options });
  deps.logger.info({ queue: job.queue, scheduler: id, everyMs, why }, 'repeating job registered');
  return why;
}
