import type { WorkerOptions } from 'bullmq';
import type { QueueName } from '../src/jobs/registry.js';
import type { Deps } from '../src/deps.js';
import { scheduleSweep } from './maintenance/sweep.processor.js';
import { scheduleCardSweep } from './card-timers/card-timers.processors.js';
import { scheduleMailSweep } from './mail-sends/mail-sends.processors.js';
import { scheduleInboundSweep } from './inbound-mail/inbound-mail.processors.js';

/**
 * Per-pool worker options (concurrency from the *_CONCURRENCY settings) and start-up work. `onStart`
 * registers the pool's repeating jobs; it runs at start and again while the pool runs (workers/main.ts),
 * so it must be harmless to repeat.
 */
export const POOL_SETUP: Partial<Record<QueueName, { options?(rt: Deps): Partial<WorkerOptions>; onStart?(rt: Deps): Promise<unknown> }>> =
  {
    'agent-turns': {
      // Stall detection decides how soon a killed worker's turn is picked up again.
      options: (rt) => ({
        concurrency: rt.config.agent.turnConcurrency,
        lockDuration: rt.config.agent.turnLockMs,
        stalledInterval: rt.config.agent.turnStalledIntervalMs,
      }),
    },
    maintenance: { onStart: scheduleSweep, options: (rt) => ({ concurrency: rt.config.maintenance.concurrency }) },
    'card-timers': { onStart: scheduleCardSweep, options: (rt) => ({ concurrency: rt.config.review.timersConcurrency }) },
    'mail-sends': { onStart: scheduleMailSweep, options: (rt) => ({ concurrency: rt.config.mail.sendsConcurrency }) },
    // Runs of different accounts move side by side; each job also hands its run on after a bounded share.
    'workflow-runs': { options: (rt) => ({ concurrency: rt.config.workflows.concurrency }) },
    'webhook-events': { options: (rt) => ({ concurrency: rt.config.webhooks.eventsConcurrency }) },
    'inbound-mail': { onStart: scheduleInboundSweep, options: (rt) => ({ concurrency: rt.config.inbound.concurrency }) },
  };
