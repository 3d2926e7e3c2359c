import { z } from 'zod';
import { newId } from '../ids.js';
import { defineJob, defineQueue } from './contract.js';
import { defineSweep } from './sweep.js';

/**
 * The sweeper, every MAINTENANCE_SWEEP_MS: fails `queue: true` messages past their lifetime and queues
 * again the accounts whose turns never got a job (or whose worker died), repairs workflow schedulers and
 * runs, hands on webhook deliveries and conversions left without a job, and prunes what is kept for a
 * while. Every step is a conditional update, so overlap is harmless.
 */
export const maintenanceSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.sweep',
  description: 'Expires queued agent messages after their lifetime and re-enqueues orphaned turns; safe to run any number of times.',
  schedulerId: 'maintenance-sweep',
  everyMs: (config) => config.maintenance.sweepEveryMs,
});

/** Why an aggregation was queued: new conversions (or the sweep found some), or the job before handed on. */
export type AggregateReason = { why: 'new' } | { why: 'more' };

/**
 * Attributes an account's stored conversions (last touch) and counts them on their channels. One job
 * per account waits at a time for new conversions; a run that leaves rows hands on to a new job.
 */
export const measurementAggregate = defineJob({
  queue: 'maintenance',
  name: 'measurement.aggregate',
  payload: z.object({ accountId: z.string().min(1) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description:
    'Attributes new conversion events to their visit’s channel (last touch) and counts them; a counted row is never counted again.',
  // New conversions fold into the account's waiting job; a hand-on is its own job (this one still holds the key).
  jobId: (p, r: AggregateReason) =>
    r.why === 'new' ? `measurement-aggregate-${p.accountId}` : `measurement-aggregate-${p.accountId}-${newId('more')}`,
});

/** The maintenance queue: the sweeper and the conversions' counting (workers/maintenance.ts). */
export const maintenanceQueue = defineQueue('maintenance', { maintenanceSweep, measurementAggregate });
