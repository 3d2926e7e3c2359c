import { agentTurnDoors } from '../agent/core/doors.js';
import type { Queryable } from '../db.js';
import { metrics } from '../metrics/registry.js';
import type { RunStatus, RunStep, WorkflowStep } from './workflows.types.js';

/** A run's own copy of each step as it was when the run fired, with the step's outcome. */
export interface RunStepState extends RunStep {
  details: string;
  gate?: WorkflowStep['gate'];
  /** The agent's last bubble for the step, for the run's summary. */
  reply?: string;
}

export interface RunState {
  id: string;
  workflowId: string;
  accountId: string;
  status: RunStatus;
  revision: number;
  workflowVersion: number;
  scheduledFor: number;
  startedAt: number;
  finishedAt: number | null;
  steps: RunStepState[];
  summary: string | null;
  deliveredTo: string | null;
}

export const TERMINAL: readonly RunStatus[] = ['done', 'failed', 'cancelled'];
const OPEN: readonly RunStatus[] = ['running', 'waiting'];

interface RunRow {
  id: string;
  workflow_id: string;
  account_id: string;
  status: RunStatus;
  revision: number;
  workflow_version: number;
  scheduled_for: number;
  started_at: number;
  finished_at: number | null;
  steps: RunStepState[];
  summary: string | null;
  delivered_to: string | null;
}

const toState = (r: RunRow): RunState => ({
  id: r.id,
  workflowId: r.workflow_id,
  accountId: r.account_id,
  status: r.status,
  revision: r.revision,
  workflowVersion: r.workflow_version,
  scheduledFor: r.scheduled_for,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  steps: r.steps,
  summary: r.summary,
  deliveredTo: r.delivered_to,
});

/** Runs ended in memory (closeRun) and not saved yet: their save is the run's end, counted once. */
const closing = new WeakSet<RunState>();
export const markClosing = (run: RunState): void => void closing.add(run);

/**
 * SQL text for a statement of another area that must read workflow runs inside it (the `/results` harness, handed it
 * by the route and read_results): the runs as a table of (account_id, status, finished_at), a subquery Postgres folds
 * into the statement. Read-only.
 */
export const WORKFLOW_RUNS_SQL = '(SELECT account_id, status, finished_at FROM workflow_runs)';

/** The SQL of workflow runs: the row is the run's whole progress, and every save is conditional on its revision. */
export function runsRepository(q: Queryable) {
  return {
    async load(runId: string): Promise<RunState | null> {
      const r = await q('workflow_runs').where({ id: runId }).first<RunRow | undefined>();
      return r ? toState(r) : null;
    },
    /** Inserts the run of one firing unless that job's run exists; either way, that run. */
    async ensure(run: Omit<RunState, 'revision' | 'finishedAt' | 'summary' | 'deliveredTo'>, jobId: string): Promise<RunState> {
      await q('workflow_runs')
        .insert({
          id: run.id,
          workflow_id: run.workflowId,
          account_id: run.accountId,
          job_id: jobId,
          status: run.status,
          workflow_version: run.workflowVersion,
          scheduled_for: run.scheduledFor,
          started_at: run.startedAt,
          steps: JSON.stringify(run.steps),
        })
        .onConflict(['account_id', 'job_id'])
        .ignore();
      return toState(await q('workflow_runs').where({ job_id: jobId }).first<RunRow>());
    },
    /** Saves the run only if nobody saved it since it was read; false means another writer moved it on. */
    async save(run: RunState): Promise<boolean> {
      const n = await q('workflow_runs')
        .where({ id: run.id, revision: run.revision })
        .update({
          status: run.status,
          revision: run.revision + 1,
          steps: JSON.stringify(run.steps),
          finished_at: run.finishedAt,
          summary: run.summary,
          delivered_to: run.deliveredTo,
        });
      if (n === 1) run.revision += 1;
      // Counted by the save that ends it (a save lost to another writer counts nothing).
      if (n === 1 && closing.delete(run)) metrics.workflowRuns.inc({ outcome: run.status });
      return n === 1;
    },
    /** A workflow's runs that have not ended (running, or waiting at a gate). */
    async openRunIds(workflowId: string): Promise<string[]> {
      const rows: Array<{ id: string }> = await q('workflow_runs').where({ workflow_id: workflowId }).whereIn('status', OPEN).select('id');
      return rows.map((r) => r.id);
    },
    /** Runs under way (not at a gate), oldest first, with the id of the job that fired each. */
    async running(limit: number): Promise<Array<{ id: string; jobId: string }>> {
      const rows: Array<{ id: string; job_id: string }> = await q('workflow_runs')
        .where({ status: 'running' })
        .orderBy('started_at')
        .limit(limit)
        .select('id', 'job_id');
      return rows.map((r) => ({ id: r.id, jobId: r.job_id }));
    },
    /** How the step's turn ended, or null while it has not. */
    turnEnd: (turnId: string) => agentTurnDoors(q).end(turnId),
    lastReply: (turnId: string) => agentTurnDoors(q).lastReply(turnId),
  };
}
