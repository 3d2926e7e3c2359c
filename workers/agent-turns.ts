import type { AgentDoors } from '../src/agent/tools.js';
import { drainAccount } from '../src/agent/turn-runner.js';
import { agentTurnsQueue } from '../src/jobs/agent-turns.js';
import { insertWorkflow } from '../src/workflows/workflows.service.js';
import { agentLease, definePool } from './pool.js';

/** The doors the agent's tools use into areas above it: propose_workflow records through the workflows' door. */
export const agentDoors: AgentDoors = {
  proposeWorkflow: (q, accountId, input) => insertWorkflow(q, accountId, input, { proposedByAgent: true }),
};

/** The agent-turns pool: AGENT_TURN_CONCURRENCY drains side by side, each on the agent's lease. */
export const agentTurnsPool = definePool(agentTurnsQueue, {
  handlers: {
    /** Runs the account's queued turns under its advisory lock, with the doors passed in; answers how many it ran. */
    agentTurn: async ({ accountId }, { deps, log }) => ({ ran: await drainAccount(deps, accountId, log, agentDoors) }),
  },
  options: (deps) => ({ concurrency: deps.config.agent.turnConcurrency, ...agentLease(deps) }),
});
