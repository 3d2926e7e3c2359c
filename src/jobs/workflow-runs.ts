import { z } from 'zod';
import { newId } from '../ids.js';
import { defineJob, defineQueue } from './contract.js';

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
  // The id of the workflow's job scheduler (a firing's job id is BullMQ's, one per firing).
  jobId: (p) => `wf-${p.workflowId}`,
});

/** What moved a run on: its gate card was decided, the job before handed it over, or the sweep found it stranded. */
export type AdvanceReason = { why: 'gate'; cardId: string } | { why: 'handover' } | { why: 'repair' };

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
  // After a gate: one job per decided card. A handover or a repair is never folded into a waiting job.
  jobId: (p, r: AdvanceReason) => {
    if (r.why === 'gate') return `wfadv-${p.runId}-${r.cardId}`;
    return r.why === 'handover' ? `wfadv-${p.runId}-${newId('y')}` : `wfrepair-${p.runId}-${newId('x')}`;
  },
});

/** The workflow-runs queue: workflow firings and the moves of their runs (workers/workflow-runs.ts). */
export const workflowRunsQueue = defineQueue('workflow-runs', { workflowRun, workflowAdvance });
