import type { Queryable } from '../db.js';
import { markClosing, runsRepository, TERMINAL, type RunState } from './runs.repository.js';

/** How often a stop retries a run another writer saved in between; past that, the runner's own check stops it. */
const STOP_ATTEMPTS = 5;

export function skipRest(run: RunState, from: number, reason: string): void {
  for (const s of run.steps.slice(from)) {
    if (s.outcome === 'pending' || s.outcome === 'waiting_for_gate') Object.assign(s, { outcome: 'skipped', reason, at: Date.now() });
  }
}

/** Ends the run with `status`, its finish time and a summary of every step (the caller saves it). */
export function closeRun(run: RunState, status: 'done' | 'failed' | 'cancelled', workflowName: string | undefined): void {
  run.status = status;
  run.finishedAt = Date.now();
  markClosing(run);
  const lines = run.steps.map(
    (s) => `- ${s.title}: ${s.outcome === 'done' && s.reply ? s.reply : s.outcome}${s.reason ? ` (${s.reason})` : ''}`,
  );
  run.summary = `${workflowName ?? 'Workflow'} run ${status}.\n${lines.join('\n')}`;
}

/**
 * A failed step (its turn failed, or it ran past its time) ends the run `failed` in the same save: the
 * step is never picked again, and the steps after it are skipped.
 */
export function failStep(run: RunState, index: number, reason: string, workflowName: string | undefined): void {
  Object.assign(run.steps[index]!, { outcome: 'failed', reason, at: Date.now() });
  skipRest(run, index + 1, 'an earlier step failed');
  closeRun(run, 'failed', workflowName);
}

/**
 * Ends an open run `cancelled` because its workflow was paused or deleted. A step whose turn is under
 * way is marked skipped too: the run no longer waits for it (the turn itself is left to finish).
 */
export function stopRun(run: RunState, reason: string, workflowName: string | undefined): void {
  for (const s of run.steps) {
    if (s.outcome === 'running') Object.assign(s, { outcome: 'skipped', reason: `${reason} while this step ran`, at: Date.now() });
  }
  skipRest(run, 0, reason);
  closeRun(run, 'cancelled', workflowName);
}

/** Stops every open run of a workflow, in the caller's transaction (the pause or delete that is the reason). */
export async function stopRuns(q: Queryable, workflowId: string, workflowName: string, reason: string): Promise<number> {
  const repo = runsRepository(q);
  let stopped = 0;
  for (const id of await repo.openRunIds(workflowId)) {
    for (let attempt = 0; attempt < STOP_ATTEMPTS; attempt++) {
      const run = await repo.load(id);
      if (!run || TERMINAL.includes(run.status)) break;
      stopRun(run, reason, workflowName);
      if (await repo.save(run)) {
        stopped += 1;
        break;
      }
    }
  }
  return stopped;
}
