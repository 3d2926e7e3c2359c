import { drainAccount } from '../src/agent/turns/turn-runner.js';
import { wireWorkflowProposals } from '../src/agent/tools/tools.js';
import { agentTurnsQueue } from '../src/jobs/agent-turns.js';
import { insertWorkflow } from '../src/workflows/workflows.service.js';
import { agentLease, definePool } from './pool.js';

// The agent's propose_workflow tool records through the workflows' door (they stand above the agent).
wireWorkflowProposals((q, accountId, input) => insertWorkflow(q, accountId, input, { proposedByAgent: true }));

/** The agent-turns pool: AGENT_TURN_CONCURRENCY drains side by side, each on the agent's lease. */
export const agentTurnsPool = definePool(agentTurnsQueue, {
  handlers: {
    /** Runs the account's queued turns under its advisory lock; answers how many it ran. */
    agentTurn: async ({ accountId }, { deps, log }) => ({ ran: await drainAccount(deps, accountId, log) }),
  },
  options: (deps) => ({ concurrency: deps.config.agent.turnConcurrency, ...agentLease(deps) }),
});
