import { agentTurn } from './agent-turn.job.js';
import { maintenanceSweep } from './maintenance-sweep.job.js';
import type { JobDef } from './registry.js';
import { workflowAdvance, workflowRun } from './workflow-run.job.js';

/**
 * The job catalog: every job the pools run. Each feature adds its `<name>.job.ts` here; a pool's
 * worker refuses to start unless each of its queue's jobs has exactly one processor.
 */
export const JOBS: JobDef[] = [agentTurn, maintenanceSweep, workflowRun, workflowAdvance];
