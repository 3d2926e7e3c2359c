import { AGENT_TURNS_SQL } from '../src/agent/core/doors.js';
import { withAdoptedDefaults } from '../src/experiments/adopted-defaults.js';
import { EXPERIMENT_TOOLS } from '../src/agent/experiments/tools.js';
import { AGENT_TOOLS } from '../src/agent/tools/catalog.js';
import { type AgentDoors, toolRegistry } from '../src/agent/tools/tool.js';
import { drainAccount } from '../src/agent/turns/turn-runner.js';
import { agentTurnsQueue } from '../src/jobs/agent-turns.js';
import { inboundUrlsRepository } from '../src/inbound/inbound-urls.repository.js';
import { WORKFLOW_RUNS_SQL } from '../src/workflows/runs.repository.js';
import { insertWorkflow } from '../src/workflows/workflows.service.js';
import { agentLease, definePool } from './pool.js';

/**
 * What the agent's turns run with, assembled here (the composition root): the one tool registry (the agent's own tools
 * and the experiments'; a name both define stops the process at start-up) and the doors its tools use into areas
 * above the agent: propose_workflow records through the workflows' door, ship starts from experiments' defaults,
 * read_results hands the scoreboard the agent's turns, the workflows' runs and inbound's URLs.
 */
export const agentDoors: AgentDoors = {
  tools: toolRegistry(AGENT_TOOLS, EXPERIMENT_TOOLS),
  proposeWorkflow: (q, accountId, input) => insertWorkflow(q, accountId, input, { proposedByAgent: true }),
  adoptedDefaults: withAdoptedDefaults,
  scoreboard: {
    turns: AGENT_TURNS_SQL,
    workflowRuns: WORKFLOW_RUNS_SQL,
    hasInboundUrl: (q, accountId) => inboundUrlsRepository(q).has(accountId),
  },
};

/** The agent-turns pool: AGENT_TURN_CONCURRENCY drains side by side, each on the agent's lease. */
export const agentTurnsPool = definePool(agentTurnsQueue, {
  handlers: {
    /** Runs the account's queued turns under its advisory lock, with the doors passed in; answers how many it ran. */
    agentTurn: async ({ accountId }, { deps, log }) => ({ ran: await drainAccount(deps, accountId, log, agentDoors) }),
  },
  options: (deps) => ({ concurrency: deps.config.agent.turnConcurrency, ...agentLease(deps) }),
});
