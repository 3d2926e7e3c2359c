import { z } from 'zod';
import { newId } from '../ids.js';
import { defineJob, defineQueue } from './contract.js';
import { defineRetiredSweep, defineSweep, type SweepRetry } from './sweep.js';

/**
 * The maintenance sweeps: one repeating job per area, each with its own scheduler, interval
 * (MAINTENANCE_<AREA>_SWEEP_MS, else MAINTENANCE_SWEEP_MS), retries and description (what Bull Board
 * shows), so a sweep that fails never delays or skips another. Every step of each is a conditional
 * update in bounded batches, so overlapping runs are harmless. Adding one: an entry here (and in the
 * queue below), its handler in workers/maintenance.ts, optionally its interval setting in
 * src/config/maintenance-sweeps.ts (docs/decisions/jobs.md, "Maintenance sweeps").
 */

/** Cheap, quick sweeps whose work a person may be waiting on: a transient fault is tried again soon. */
const SOON: SweepRetry = { attempts: 3, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } };
/** Heavier passes: one more try after a pause, then the next interval. */
const ONCE_MORE: SweepRetry = { attempts: 2, backoff: { type: 'fixed', delay: 15_000, jitter: 0.2 } };

export const turnsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.turns',
  description:
    'Fails queue: true messages queued past their lifetime; re-enqueues turns that never started or lost their worker; safe to repeat.',
  schedulerId: 'maintenance-turns',
  everyMs: (config) => config.maintenance.sweeps.turns,
  retry: SOON,
});

export const workflowSchedulersSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.workflow-schedulers',
  description: 'Registers again the job scheduler of each live scheduled workflow whose scheduler Redis lost; an upsert, safe to repeat.',
  schedulerId: 'maintenance-workflow-schedulers',
  everyMs: (config) => config.maintenance.sweeps.workflowSchedulers,
  retry: SOON,
});

export const workflowRunsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.workflow-runs',
  description: 'Queues a step job for workflow runs left running with no job to move them; keyed per run, safe to repeat.',
  schedulerId: 'maintenance-workflow-runs',
  everyMs: (config) => config.maintenance.sweeps.workflowRuns,
  retry: SOON,
});

export const webhookDeliveriesSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.webhook-deliveries',
  description: 'Queues the hand-over of accepted webhook deliveries whose job was lost; keyed per delivery, safe to repeat.',
  schedulerId: 'maintenance-webhook-deliveries',
  everyMs: (config) => config.maintenance.sweeps.webhookDeliveries,
  retry: SOON,
});

export const conversionsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.conversions',
  description: 'Queues measurement.aggregate for accounts with conversions left uncounted; keyed per account, safe to repeat.',
  schedulerId: 'maintenance-conversions',
  everyMs: (config) => config.maintenance.sweeps.conversions,
  retry: SOON,
});

export const rollupsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.rollups',
  description: 'Folds settled channel events and deltas into the results rollups (100,000 rows a pass at most); safe to repeat.',
  schedulerId: 'maintenance-rollups',
  everyMs: (config) => config.maintenance.sweeps.rollups,
  retry: ONCE_MORE,
});

export const retentionSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.retention',
  description:
    'Deletes history past its retention in short batches for at most RETENTION_PASS_MS and keeps the month partitions; safe to repeat.',
  schedulerId: 'maintenance-retention',
  everyMs: (config) => config.maintenance.sweeps.retention,
  retry: ONCE_MORE,
});

export const experimentsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.experiments',
  description:
    'Drafts the mail cards of running experiments and looks whether one has a winner (EXPERIMENT_PASS_LIMIT a pass); safe to repeat.',
  schedulerId: 'maintenance-experiments',
  everyMs: (config) => config.maintenance.sweeps.experiments,
  retry: ONCE_MORE,
});

export const eventsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.events',
  description: 'Queues again the delivery of decisions’ follow-up events never queued or failed (10 times each at most); safe to repeat.',
  schedulerId: 'maintenance-events',
  everyMs: (config) => config.maintenance.sweeps.events,
  retry: SOON,
});

export const leadImportsSweep = defineSweep({
  queue: 'maintenance',
  name: 'maintenance.lead-imports',
  description:
    'Queues again CSV imports whose job was lost and fails those unfinished after an hour (nothing of them was written); safe to repeat.',
  schedulerId: 'maintenance-lead-imports',
  everyMs: (config) => config.maintenance.sweeps.leadImports,
  retry: SOON,
});

/**
 * The single sweep that ran all of the above in a row, replaced by them. A job of it still in Redis when
 * a new version starts (queued by its scheduler, or by a process of the old version during a rolling
 * deploy) completes doing nothing: the sweeps above do its work. Its scheduler is removed at start.
 */
export const maintenanceSweep = defineRetiredSweep({
  queue: 'maintenance',
  name: 'maintenance.sweep',
  description: 'Retired: replaced by the maintenance.* sweeps; a job of it left in Redis completes doing nothing.',
  schedulerId: 'maintenance-sweep',
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

/**
 * Runs one uploaded CSV import (docs/dashboard.md, "Import"): its rows are written in one transaction with the
 * import's final state, so a repeat after a crash starts the file over and a finished import is skipped.
 */
export const leadsImport = defineJob({
  queue: 'maintenance',
  name: 'leads.import',
  payload: z.object({ accountId: z.string().min(1), importId: z.string().min(1) }),
  options: { attempts: 3, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description:
    'Imports an uploaded CSV of contacts in one transaction with its final state; a finished import is skipped, so a repeat is harmless.',
  jobId: (p) => `leads-import-${p.importId}`,
});

/** The maintenance queue: one sweep per area, the retired single sweep, and the conversions' counting (workers/maintenance.ts). */
export const maintenanceQueue = defineQueue('maintenance', {
  turnsSweep,
  workflowSchedulersSweep,
  workflowRunsSweep,
  webhookDeliveriesSweep,
  conversionsSweep,
  rollupsSweep,
  retentionSweep,
  experimentsSweep,
  eventsSweep,
  leadImportsSweep,
  maintenanceSweep,
  measurementAggregate,
  leadsImport,
});
