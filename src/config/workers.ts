import type { z } from 'zod';
import { int } from '../env-rules.js';

/** Settings of process start-up and of the worker pools' own upkeep. */
export const workersEnv = {
  WORKER_SCHEDULES_CHECK_MS: int(30_000),
  START_DEADLINE_MS: int(60_000),
} satisfies z.ZodRawShape;

export function workersConfig(env: z.output<z.ZodObject<typeof workersEnv>>) {
  return {
    /**
     * How often a process running pools checks that their repeating jobs (the sweeps, the provider
     * polls) are registered in Redis, and registers again any that are gone (a flush, a Redis without
     * persistence restarted). It also checks after each reconnect.
     */
    schedulesCheckMs: env.WORKER_SCHEDULES_CHECK_MS,
    /**
     * How long start-up keeps trying again when a store cuts its connections (backing off between
     * tries) before the process stops with one line saying why.
     */
    startDeadlineMs: env.START_DEADLINE_MS,
  };
}
