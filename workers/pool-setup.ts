import type { WorkerOptions } from 'bullmq';
import type { QueueName } from '../src/jobs/registry.js';
import type { Deps } from '../src/deps.js';
import { scheduleSweep } from './maintenance/sweep.processor.js';
import { scheduleCardSweep } from './card-timers/card-timers.processors.js';
import { scheduleMailSweep } from './mail-sends/mail-sends.processors.js';
import { scheduleInboundSweep } from './inbound-mail/inbound-mail.processors.js';

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
const agentLease = (rt: Deps): Partial<WorkerOptions> => ({
  lockDuration: rt.config.agent.turnLockMs,
  stalledInterval: rt.config.agent.turnStalledIntervalMs,
  maxStalledCount: STALLS_BEFORE_FAILED,
});

/**
 * Per-pool worker options (concurrency from the *_CONCURRENCY settings) and start-up work. `onStart`
 * registers the pool's repeating jobs; it runs at start and again while the pool runs (workers/main.ts),
 * so it must be harmless to repeat.
 */
export const POOL_SETUP: Partial<Record<QueueName, { options?(rt: Deps): Partial<WorkerOptions>; onStart?(rt: Deps): Promise<unknown> }>> =
  {
    'agent-turns': { options: (rt) => ({ concurrency: rt.config.agent.turnConcurrency, ...agentLease(rt) }) },
    maintenance: { onStart: scheduleSweep, options: (rt) => ({ concurrency: rt.config.maintenance.concurrency }) },
    'card-timers': { onStart: scheduleCardSweep, options: (rt) => ({ concurrency: rt.config.review.timersConcurrency }) },
    'mail-sends': { onStart: scheduleMailSweep, options: (rt) => ({ concurrency: rt.config.mail.sendsConcurrency }) },
    // Runs of different accounts move side by side; each job also hands its run on after a bounded share.
    'workflow-runs': { options: (rt) => ({ concurrency: rt.config.workflows.concurrency }) },
    'webhook-events': { options: (rt) => ({ concurrency: rt.config.webhooks.eventsConcurrency, ...agentLease(rt) }) },
    'inbound-mail': { onStart: scheduleInboundSweep, options: (rt) => ({ concurrency: rt.config.inbound.concurrency }) },
  };
