import { agentTurnProcessor } from './agent-turns/agent-turn.processor.js';
import type { Processor } from './create-worker.js';
import { sweepProcessor } from './maintenance/sweep.processor.js';
import { workflowAdvanceProcessor, workflowRunProcessor } from './workflow-runs/workflow-run.processor.js';

/** Every processor, one per job in src/jobs/catalog.ts. Features add theirs here. */
export const PROCESSORS: Processor[] = [agentTurnProcessor, sweepProcessor, workflowRunProcessor, workflowAdvanceProcessor];
