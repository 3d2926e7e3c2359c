import { z } from 'zod';
import { defineJob } from './registry.js';

/** Finds fenced sends no reconciliation is working on (a crashed sender, a lost job) and settles them. */
export const mailSweep = defineJob({
  queue: 'mail-sends',
  name: 'mail.sweep',
  payload: z.object({}),
  options: { attempts: 1, removeOnComplete: true },
  description: 'Reconciles fenced mail sends left without a job; each settle is a conditional update.',
  // The id of its job scheduler: one sweep schedule per queue.
  jobId: () => 'mail-sweep',
});
