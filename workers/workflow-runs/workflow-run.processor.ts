import { workflowAdvance, workflowRun } from '../../src/jobs/workflow-run.job.js';
import { advanceRun, fireRun } from '../../src/workflows/runs.service.js';
import { defineProcessor } from '../create-worker.js';

/** One firing of a workflow's scheduler: runs (or, retried, continues) that firing's run. */
export const workflowRunProcessor = defineProcessor({
  job: workflowRun,
  async run({ workflowId }, { rt, job }) {
    const scheduledFor = job.opts.prevMillis ?? job.timestamp + (job.opts.delay ?? 0);
    const run = await fireRun(rt, workflowId, job.id ?? `adhoc-${job.timestamp}`, scheduledFor, rt.config.workflows);
    return run ? { runId: run.runId, status: run.status } : { skipped: 'workflow is not live' };
  },
});

/** A run whose gate was approved, or that an earlier job handed on, moves on to its next steps. */
export const workflowAdvanceProcessor = defineProcessor({
  job: workflowAdvance,
  async run({ runId }, { rt }) {
    const run = await advanceRun(rt, runId, rt.config.workflows);
    return run ? { runId, status: run.status } : { skipped: 'no such run' };
  },
});
