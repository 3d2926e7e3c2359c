import type { WorkerOptions } from 'bullmq';
import type { QueueName } from '../src/jobs/registry.js';
import type { Runtime } from '../src/runtime.js';
import { scheduleSweep } from './maintenance/sweep.processor.js';
import { scheduleCardSweep } from './card-timers/card-timers.processors.js';
import { scheduleMailSweep } from './mail-sends/mail-sends.processors.js';

/** Timer jobs (and the background mail sends they make) one card-timers worker process runs at once. */
export const CARD_TIMERS_CONCURRENCY = 8;

/** Per-pool worker options and start-up work. Pools not listed use createWorker's defaults. */
export const POOL_SETUP: Partial<Record<QueueName, { options?(rt: Runtime): Partial<WorkerOptions>; onStart?(rt: Runtime): Promise<void> }>> = {
  'agent-turns': {
    // Stall detection decides how soon a killed worker's turn is picked up again.
    options: (rt) => ({
      concurrency: rt.config.agent.turnConcurrency,
      lockDuration: rt.config.agent.turnLockMs,
      stalledInterval: rt.config.agent.turnStalledIntervalMs,
    }),
  },
  maintenance: { onStart: scheduleSweep },
  'card-timers': { onStart: scheduleCardSweep, options: () => ({ concurrency: CARD_TIMERS_CONCURRENCY }) },
  'mail-sends': { onStart: scheduleMailSweep, options: () => ({ concurrency: 4 }) },
  // Runs of different accounts move side by side; each job also hands its run on after a bounded share.
  'workflow-runs': { options: (rt) => ({ concurrency: rt.config.workflows.concurrency }) },
  'webhook-events': { options: (rt) => ({ concurrency: rt.config.webhooks.eventsConcurrency }) },
};
