import { toolCatalog } from '../tools/tool.js';
import { proposeExperiment } from './propose-experiment.js';
import { readResults } from './read-results.js';

/** The experiments' tools, added to the agent's own by the process that runs turns (workers/agent-turns.ts). */
export const EXPERIMENT_TOOLS = toolCatalog({ propose_experiment: proposeExperiment, read_results: readResults });
