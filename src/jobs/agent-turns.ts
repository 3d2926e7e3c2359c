import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';

/**
 * Why a drain is asked for, which the payload (only the account) does not say: a turn was recorded
 * (one drain per turn), the sweep found the account's turns orphaned (one per sweep time bucket), or a
 * drain stopped with runnable turns left (one per moment).
 */
export type DrainReason = { why: 'turn'; turnId: string } | { why: 'sweep'; bucket: number } | { why: 'more'; at: number };

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
  jobId: (p, r: DrainReason) =>
    r.why === 'turn' ? `turn-${r.turnId}` : r.why === 'sweep' ? `sweep-${p.accountId}-${r.bucket}` : `more-${p.accountId}-${r.at}`,
});

/** The agent-turns queue: its pool runs turns (workers/agent-turns.ts). */
export const agentTurnsQueue = defineQueue('agent-turns', { agentTurn });
