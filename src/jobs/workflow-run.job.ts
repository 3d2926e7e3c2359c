import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Fired by a workflow's BullMQ job scheduler (one per workflow, keyed `wf-<id>`). The run row is keyed
 * by the job id, so a second delivery of the same firing continues that run instead of starting another.
 */
export const workflowRun = defineJob({
  queue: 'workflow-runs',
  name: 'workflow.run',
  payload: z.object({ workflowId: z.string() }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description: 'Runs one firing of a workflow: its steps in order through the agent, stopping at gates.',
});

/**
 * Moves a run on: after its gate card was decided, or after the job before it used its share of the
 * pool and handed the run over. Advancing twice is harmless (conditional saves).
 */
export const workflowAdvance = defineJob({
  queue: 'workflow-runs',
  name: 'workflow.advance',
  payload: z.object({ runId: z.string() }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description: 'Continues a workflow run after a person decided its gate, or after the previous job handed it on.',
});
