import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * The sweeper: fails `queue: true` messages past their lifetime and queues again the accounts whose
 * turns never got a job (or whose worker died). Every step is a conditional update, so overlap is harmless.
 */
export const maintenanceSweep = defineJob({
  queue: 'maintenance',
  name: 'maintenance.sweep',
  payload: z.object({}),
  options: { attempts: 1, removeOnComplete: true },
  description: 'Expires queued agent messages after their lifetime and re-enqueues orphaned turns; safe to run any number of times.',
  // The id of its job scheduler: one sweep schedule per queue.
  jobId: () => 'maintenance-sweep',
});
