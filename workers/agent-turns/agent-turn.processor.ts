import { drainAccount } from '../../src/agent/turn-runner.js';
import { agentTurn } from '../../src/jobs/agent-turn.job.js';
import { defineProcessor } from '../create-worker.js';

/** Runs the account's queued turns under its advisory lock; returns how many it ran. */
export const agentTurnProcessor = defineProcessor({
  job: agentTurn,
  run: async ({ accountId }, { rt, log }) => ({ ran: await drainAccount(rt, accountId, log) }),
});
