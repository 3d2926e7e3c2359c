import type { z } from 'zod';
import { int } from '../env-rules.js';

/** How long BullMQ keeps finished jobs, and how soon a killed worker's job runs again. */
export const jobsEnv = {
  JOBS_KEEP_COMPLETED_COUNT: int(1_000, 0),
  JOBS_KEEP_COMPLETED_AGE_SECONDS: int(24 * 3600),
  JOBS_KEEP_FAILED_COUNT: int(5_000, 0),
  JOBS_KEEP_FAILED_AGE_SECONDS: int(7 * 24 * 3600),
  // BullMQ's lock and stalled-job check for every pool but agent-turns (AGENT_TURN_*): how soon a killed worker's job runs again.
  JOBS_LOCK_MS: int(30_000),
  JOBS_STALLED_INTERVAL_MS: int(30_000),
} satisfies z.ZodRawShape;

/** Finished-job retention, as BullMQ's KeepJobs (age in seconds), applied to every queue; the pools' lock and stall check. */
export function jobsConfig(env: z.output<z.ZodObject<typeof jobsEnv>>) {
  return {
    keepCompleted: { count: env.JOBS_KEEP_COMPLETED_COUNT, age: env.JOBS_KEEP_COMPLETED_AGE_SECONDS },
    keepFailed: { count: env.JOBS_KEEP_FAILED_COUNT, age: env.JOBS_KEEP_FAILED_AGE_SECONDS },
    stalled: { lockMs: env.JOBS_LOCK_MS, checkEveryMs: env.JOBS_STALLED_INTERVAL_MS },
  };
}
