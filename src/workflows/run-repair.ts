import type { Deps } from '../deps.js';
import { enqueue } from '../jobs/registry.js';
import { workflowAdvance } from '../jobs/workflow-runs.js';
import { runsRepository } from './runs.repository.js';

/** Runs one sweep looks at, and queued jobs it reads to find theirs; a busier queue waits for the next sweep. */
const REPAIR_RUNS = 500;
const REPAIR_JOBS = 2_000;

/**
 * For the maintenance sweep: a run still `running` that no job of the workflow-runs queue will move
 * (its job failed for good, for example after stalling twice in a row of crashes) gets a
 * `workflow.advance` job. A run at a gate is not one of these: its decision queues the job. A job read
 * as missing that was only finishing gives the run a second runner, which is harmless (saves are
 * conditional on the run's revision).
 */
export async function repairRuns(deps: Pick<Deps, 'db' | 'queues'>): Promise<number> {
  const queue = deps.queues.get(workflowAdvance.queue);
  if (!queue) return 0;
  const running = await runsRepository(deps.db).running(REPAIR_RUNS);
  if (!running.length) return 0;
  const states = ['active', 'waiting', 'delayed', 'prioritized'] as const;
  const counts = await queue.getJobCounts(...states);
  if (Object.values(counts).reduce((a, b) => a + b, 0) > REPAIR_JOBS) return 0;
  const held = new Set<string>();
  for (const job of await queue.getJobs([...states])) {
    if (job.id) held.add(job.id);
    const runId = (job.data as { runId?: unknown }).runId;
    if (typeof runId === 'string') held.add(runId);
  }
  const stranded = running.filter((r) => !held.has(r.jobId) && !held.has(r.id));
  for (const r of stranded) await enqueue(deps.queues, workflowAdvance, { runId: r.id }, { why: 'repair' });
  return stranded.length;
}
