import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * The card-timers repair sweep (DESIGN rule 2): applies the trust ladder to cards it has not seen and
 * does the work of any timer whose job was lost. Every step is a conditional update, so overlapping
 * sweeps and the timers themselves never act twice.
 */
export const cardSweep = defineJob({
  queue: 'card-timers',
  name: 'card.sweep',
  payload: z.object({}),
  options: { attempts: 1, removeOnComplete: true },
  description: 'Applies the trust ladder to new cards and repairs lost card timers; conditional updates make repeats harmless.',
  // The id of its job scheduler: one sweep schedule per queue.
  jobId: () => 'card-sweep',
});
