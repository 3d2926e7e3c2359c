import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Runs an account's queued turns, oldest first, under the account's advisory lock. The payload is only
 * the account: Postgres holds the turns, so a duplicate or repeated job finds nothing left to do.
 */
export const agentTurn = defineJob({
  queue: 'agent-turns',
  name: 'agent.turn',
  payload: z.object({ accountId: z.string().min(1) }),
  options: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 1_000, jitter: 0.2 },
  },
  description: "Runs an account's queued agent turns one at a time; turns live in Postgres, so a repeat is harmless.",
});
