import type { Schedule } from './schedule.js';

export interface Gate {
  on: true;
  label?: string;
}

export interface WorkflowStep {
  id: string;
  title: string;
  details: string;
  gate?: Gate;
}

export type WorkflowStatus = 'live' | 'paused';

export interface WorkflowRow {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  status: WorkflowStatus;
  scheduleText: string;
  scheduleEcho: string | null;
  scheduleError: string | null;
  schedule: Schedule | null;
  nextRunAt: number | null;
  deliverTo: string | null;
  version: number;
  steps: WorkflowStep[];
  proposedByAgent: boolean;
  acceptedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Spec 2.7, as the API renders it. */
export type WorkflowView = Pick<
  WorkflowRow,
  'name' | 'description' | 'status' | 'scheduleText' | 'scheduleEcho' | 'scheduleError' | 'deliverTo' | 'nextRunAt' | 'version' | 'steps'
> & { workflowId: string; url: string };

export type StepOutcome = 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'waiting_for_gate';

export interface RunStep {
  stepId: string;
  title: string;
  outcome: StepOutcome;
  reason?: string;
  turnId?: string;
  cardId?: string;
  at?: number;
}

export type RunStatus = 'running' | 'waiting' | 'done' | 'failed' | 'cancelled';

export interface RunView {
  runId: string;
  workflowId: string;
  status: RunStatus;
  workflowVersion: number;
  scheduledFor: number;
  startedAt: number;
  finishedAt: number | null;
  steps: RunStep[];
  summary: string | null;
  deliveredTo: string | null;
}

export interface WorkflowInput {
  name: string;
  scheduleText: string;
  steps: Array<{ id?: string; title: string; details?: string; gate?: Gate }>;
  description?: string;
  deliverTo?: string;
}

/** `null` clears `description` or `deliverTo`. */
export interface WorkflowPatch extends Omit<Partial<WorkflowInput>, 'description' | 'deliverTo'> {
  description?: string | null;
  deliverTo?: string | null;
  status?: WorkflowStatus;
}
