import { workflowRunsQueue } from '../src/jobs/workflow-runs.js';
import { advanceRun, fireRun } from '../src/workflows/runs.service.js';
import { definePool } from './pool.js';

/** The workflow-runs pool: runs of different accounts move side by side; each job also hands its run on after a bounded share. */
export const workflowRunsPool = definePool(workflowRunsQueue, {
  handlers: {
    /** One firing of a workflow's scheduler: runs (or, retried, continues) that firing's run. */
    workflowRun: async ({ workflowId }, { deps, job }) => {
      const scheduledFor = job.opts.prevMillis ?? job.timestamp + (job.opts.delay ?? 0);
      const run = await fireRun(deps, workflowId, job.id ?? `adhoc-${job.timestamp}`, scheduledFor, deps.config.workflows);
      return run ? { runId: run.runId, status: run.status } : { skipped: 'workflow is not live' };
    },
    /** A run whose gate was approved, or that an earlier job handed on, moves on to its next steps. */
    workflowAdvance: async ({ runId }, { deps }) => {
      const run = await advanceRun(deps, runId, deps.config.workflows);
      return run ? { runId, status: run.status } : { skipped: 'no such run' };
    },
  },
  options: (deps) => ({ concurrency: deps.config.workflows.concurrency }),
});
