import { drainAccount } from '../../src/agent/turn-runner.js';
import { wireWorkflowProposals } from '../../src/agent/tools.js';
import { agentTurn } from '../../src/jobs/agent-turn.job.js';
import { insertWorkflow } from '../../src/workflows/workflows.service.js';
import { defineProcessor } from '../create-worker.js';

// The agent's propose_workflow tool records through the workflows' door (they stand above the agent).
wireWorkflowProposals((q, accountId, input) => insertWorkflow(q, accountId, input, { proposedByAgent: true }));

/** Runs the account's queued turns under its advisory lock; returns how many it ran. */
export const agentTurnProcessor = defineProcessor({
  job: agentTurn,
  run: async ({ accountId }, { rt, log }) => ({ ran: await drainAccount(rt, accountId, log) }),
});
