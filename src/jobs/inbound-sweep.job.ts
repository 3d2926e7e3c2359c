import { z } from 'zod';
import { defineJob } from './registry.js';

/** Hands messages left `received` (a lost enqueue, a crashed worker, retries used up) back to parsing. */
export const inboundSweep = defineJob({
  queue: 'inbound-mail',
  name: 'inbound.sweep',
  payload: z.object({}),
  options: { attempts: 1, removeOnComplete: true },
  description: 'Re-enqueues received messages older than a minute; the parse key dedupes jobs already waiting.',
  // The id of its job scheduler: one sweep schedule per queue.
  jobId: () => 'inbound-sweep',
});
