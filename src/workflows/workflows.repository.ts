import type { Queryable } from '../db.js';
import type { Schedule } from './schedule.js';
import type { RunStep, RunView, WorkflowRow, WorkflowStep } from './workflows.types.js';

interface Row {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  status: WorkflowRow['status'];
  schedule_text: string;
  schedule_echo: string | null;
  schedule_error: string | null;
  schedule: Schedule | null;
  next_run_at: number | null;
  deliver_to: string | null;
  version: number;
  steps: WorkflowStep[];
  proposed_by_agent: boolean;
  accepted_at: number | null;
  created_at: number;
  updated_at: number;
}

interface RunRow {
  id: string;
  workflow_id: string;
  status: RunView['status'];
  workflow_version: number;
  scheduled_for: number;
  started_at: number;
  finished_at: number | null;
  steps: RunStep[];
  summary: string | null;
  delivered_to: string | null;
}

const toWorkflow = (r: Row): WorkflowRow => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  description: r.description,
  status: r.status,
  scheduleText: r.schedule_text,
  scheduleEcho: r.schedule_echo,
  scheduleError: r.schedule_error,
  schedule: r.schedule,
  nextRunAt: r.next_run_at,
  deliverTo: r.deliver_to,
  version: r.version,
  steps: r.steps,
  proposedByAgent: r.proposed_by_agent,
  acceptedAt: r.accepted_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** A run step as the API shows it; the row also keeps the step's details and gate as they were when it fired. */
export const publicStep = ({ stepId, title, outcome, reason, turnId, cardId, at }: RunStep): RunStep => ({
  stepId,
  title,
  outcome,
  ...(reason ? { reason } : {}),
  ...(turnId ? { turnId } : {}),
  ...(cardId ? { cardId } : {}),
  ...(at ? { at } : {}),
});

export const toRun = (r: RunRow): RunView => ({
  runId: r.id,
  workflowId: r.workflow_id,
  status: r.status,
  workflowVersion: r.workflow_version,
  scheduledFor: r.scheduled_for,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  steps: r.steps.map(publicStep),
  summary: r.summary,
  deliveredTo: r.delivered_to,
});

const columns = (w: Partial<WorkflowRow>) => {
  const out: Record<string, unknown> = {};
  if (w.name !== undefined) out.name = w.name;
  if (w.description !== undefined) out.description = w.description;
  if (w.status !== undefined) out.status = w.status;
  if (w.scheduleText !== undefined) out.schedule_text = w.scheduleText;
  if (w.scheduleEcho !== undefined) out.schedule_echo = w.scheduleEcho;
  if (w.scheduleError !== undefined) out.schedule_error = w.scheduleError;
  if (w.schedule !== undefined) out.schedule = w.schedule === null ? null : JSON.stringify(w.schedule);
  if (w.nextRunAt !== undefined) out.next_run_at = w.nextRunAt;
  if (w.deliverTo !== undefined) out.deliver_to = w.deliverTo;
  if (w.version !== undefined) out.version = w.version;
  if (w.steps !== undefined) out.steps = JSON.stringify(w.steps);
  if (w.proposedByAgent !== undefined) out.proposed_by_agent = w.proposedByAgent;
  if (w.acceptedAt !== undefined) out.accepted_at = w.acceptedAt;
  if (w.updatedAt !== undefined) out.updated_at = w.updatedAt;
  return out;
};

export function workflowsRepository(q: Queryable) {
  return {
    async insert(w: WorkflowRow): Promise<void> {
      await q('workflows').insert({ id: w.id, account_id: w.accountId, created_at: w.createdAt, ...columns(w) });
    },
    /** Live rows only (deleted workflows are gone from every read); `lock` holds the row for a write. */
    async find(accountId: string, id: string, lock = false): Promise<WorkflowRow | null> {
      let query = q('workflows').where({ account_id: accountId, id }).whereNull('deleted_at').first<Row | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? toWorkflow(row) : null;
    },
    async findById(id: string): Promise<WorkflowRow | null> {
      const row = await q('workflows').where({ id }).whereNull('deleted_at').first<Row | undefined>();
      return row ? toWorkflow(row) : null;
    },
    /** Workflows the account keeps (not deleted), paused and proposed ones included. */
    async countKept(accountId: string): Promise<number> {
      const row = await q('workflows').where({ account_id: accountId }).whereNull('deleted_at').count<{ n: string }[]>({ n: '*' });
      return Number(row[0]?.n ?? 0);
    },
    async list(accountId: string): Promise<WorkflowRow[]> {
      const rows: Row[] = await q('workflows')
        .where({ account_id: accountId })
        .whereNull('deleted_at')
        .orderBy('created_at', 'asc')
        .orderBy('id');
      return rows.map(toWorkflow);
    },
    /** Live workflows in id order after `afterId` (null: from the first), at most `limit`: one page of a sweep. */
    async listLive(afterId: string | null, limit: number): Promise<WorkflowRow[]> {
      let query = q('workflows').where({ status: 'live' }).whereNull('deleted_at');
      if (afterId !== null) query = query.where('id', '>', afterId);
      const rows: Row[] = await query.orderBy('id').limit(limit);
      return rows.map(toWorkflow);
    },
    async update(id: string, w: Partial<WorkflowRow>): Promise<void> {
      await q('workflows').where({ id }).update(columns(w));
    },
    async markDeleted(id: string, at: number): Promise<void> {
      await q('workflows').where({ id }).update({ deleted_at: at, updated_at: at });
    },
    async runs(workflowId: string, limit: number): Promise<RunView[]> {
      const rows: RunRow[] = await q('workflow_runs')
        .where({ workflow_id: workflowId })
        .orderBy('started_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit);
      return rows.map(toRun);
    },
    async destinations(accountId: string): Promise<Array<{ id: string; name: string }>> {
      return q('destinations').where({ account_id: accountId }).orderBy('name').select('id', 'name');
    },
    async accountTimeZone(accountId: string): Promise<string> {
      const row = await q('accounts').where({ id: accountId }).first<{ time_zone: string } | undefined>('time_zone');
      return row?.time_zone ?? 'UTC';
    },
  };
}
