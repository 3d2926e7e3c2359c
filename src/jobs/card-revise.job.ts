import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Starts the agent's revision turn for a card in `needs_revision` (about 30 seconds after the request).
 * Claiming the card (setting its revision turn) is a conditional update, so a repeat starts nothing.
 */
export const cardRevise = defineJob({
  queue: 'card-timers',
  name: 'card.revise',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), version: z.number().int() }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: "Kicks off the agent's revision turn for a card that needs changes; a card already claimed is a no-op.",
  jobId: (p) => `card-revise-${p.cardId}-v${p.version}`,
});
