import { dispatchTurn, recordTurn, waitForTurnEnd, type AgentDeps } from '../agent/agent.service.js';
import type { Db, Queryable } from '../db.js';
import { newId } from '../ids.js';
import { enqueue } from '../jobs/registry.js';
import { workflowAdvance } from '../jobs/workflow-run.job.js';
import { cardsRepository } from '../review/cards.repository.js';
import { deliverToDestination } from './destinations.service.js';
import { publicStep, workflowsRepository } from './workflows.repository.js';
import type { RunStatus, RunStep, RunView, WorkflowRow, WorkflowStep } from './workflows.types.js';

/** A run's own copy of each step as it was when the run fired, with the step's outcome. */
interface RunStepState extends RunStep {
  details: string;
  gate?: WorkflowStep['gate'];
  /** The agent's last bubble for the step, for the run's summary. */
  reply?: string;
}

interface RunState {
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

export interface RunOptions {
  /** How long one step may take the agent before the step fails. */
  stepTimeoutMs: number;
  /** The longest the runner goes without reading the step's turn (the turn's done notice wakes it sooner). */
  pollMs: number;
}

const TERMINAL: RunStatus[] = ['done', 'failed', 'cancelled'];

class LostRace extends Error {}

async function load(q: Queryable, runId: string): Promise<RunState | null> {
  const r = await q('workflow_runs').where({ id: runId }).first();
  if (!r) return null;
  return {
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
  };
}

/** Saves the run only if nobody saved it since it was read; false means another runner moved it on. */
async function save(q: Queryable, run: RunState): Promise<boolean> {
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
  return n === 1;
}

/** The run of one scheduler firing: made once per BullMQ job id, found again on a retry. */
async function ensureRun(db: Db, w: WorkflowRow, jobId: string, scheduledFor: number): Promise<RunState> {
  const id = newId('run');
  const steps: RunStepState[] = w.steps.map((s) => ({ stepId: s.id, title: s.title, details: s.details, ...(s.gate ? { gate: s.gate } : {}), outcome: 'pending' }));
  await db('workflow_runs')
    .insert({
      id,
      workflow_id: w.id,
      account_id: w.accountId,
      job_id: jobId,
      status: 'running',
      workflow_version: w.version,
      scheduled_for: scheduledFor,
      started_at: Date.now(),
      steps: JSON.stringify(steps),
    })
    .onConflict('job_id')
    .ignore();
  const row = await db('workflow_runs').where({ job_id: jobId }).first('id');
  return (await load(db, row.id))!;
}

async function lastReply(db: Db, turnId: string): Promise<string | null> {
  const r = await db('agent_replies').where({ turn_id: turnId }).orderBy('at', 'desc').orderBy('id', 'desc').first<{ text: string } | undefined>('text');
  return r?.text ?? null;
}

function skipRest(run: RunState, from: number, reason: string): void {
  for (const s of run.steps.slice(from)) {
    if (s.outcome === 'pending' || s.outcome === 'waiting_for_gate') Object.assign(s, { outcome: 'skipped', reason, at: Date.now() });
  }
}

async function finish(deps: AgentDeps, run: RunState, w: WorkflowRow | null): Promise<void> {
  run.status = run.steps.some((s) => s.outcome === 'failed') ? 'failed' : run.status === 'cancelled' ? 'cancelled' : 'done';
  run.finishedAt = Date.now();
  const lines: string[] = [];
  for (const s of run.steps) lines.push(`- ${s.title}: ${s.outcome === 'done' && s.reply ? s.reply : s.outcome}${s.reason ? ` (${s.reason})` : ''}`);
  run.summary = `${w?.name ?? 'Workflow'} run ${run.status}.\n${lines.join('\n')}`;
  if (w?.deliverTo && run.status === 'done' && (await deliverToDestination(deps.db, run.accountId, w.deliverTo, run.id, run.summary))) {
    run.deliveredTo = w.deliverTo;
  }
  await save(deps.db, run);
}

/**
 * Moves a run forward from wherever it stands: each step in order becomes an agent turn (queued behind
 * the account's current work), a gated step opens an approval card and the run waits. Safe to call
 * twice or after a crash: progress is in the row, and every save is conditional on its revision.
 */
export async function advanceRun(deps: AgentDeps, runId: string, opts: RunOptions, signal?: AbortSignal): Promise<RunView | null> {
  for (;;) {
    const run = await load(deps.db, runId);
    if (!run) return null;
    if (TERMINAL.includes(run.status)) return view(run);
    const w = await workflowsRepository(deps.db).findById(run.workflowId);
    const i = run.steps.findIndex((s) => s.outcome !== 'done' && s.outcome !== 'skipped');
    if (i < 0) {
      await finish(deps, run, w);
      continue;
    }
    const step = run.steps[i]!;
    if (step.outcome === 'waiting_for_gate') return view(run);
    if (step.outcome === 'pending' && step.gate) {
      const cardId = newId('card');
      await deps.db.transaction(async (trx) => {
        Object.assign(step, { outcome: 'waiting_for_gate', cardId, at: Date.now() });
        run.status = 'waiting';
        if (!(await save(trx, run))) return;
        await cardsRepository(trx).insert({
          id: cardId,
          accountId: run.accountId,
          kind: 'approval',
          sourceType: 'workflow_gate',
          title: step.gate!.label ?? `Continue "${w?.name ?? 'workflow'}": ${step.title}`,
          prompt: `Step ${i + 1} of ${run.steps.length} waits for your ok before it acts: ${step.title}`,
          payload: { workflowId: run.workflowId, runId: run.id, stepId: step.stepId, details: step.details },
          actions: ['approve', 'dismiss'],
          primaryLabel: step.gate!.label ?? 'Continue',
        });
      });
      continue;
    }
    if (step.outcome === 'pending') {
      const text = `Workflow "${w?.name ?? run.workflowId}", step ${i + 1} of ${run.steps.length}: ${step.title}${step.details ? `\n${step.details}` : ''}`;
      // The step is claimed and its turn recorded in one transaction: a second runner either sees the
      // step running with its turn, or its own conditional save fails and nothing of it is kept.
      const recorded = await deps.db.transaction(async (trx) => {
        const r = await recordTurn(trx, deps.config, { accountId: run.accountId, kind: 'workflow_run', origin: 'workflow', text, mode: 'queue' });
        Object.assign(step, { outcome: 'running', turnId: r.turn.id, at: Date.now() });
        if (!(await save(trx, run))) throw new LostRace();
        return r;
      }).catch((err: unknown) => {
        if (err instanceof LostRace) return null;
        throw err;
      });
      if (recorded) await dispatchTurn(deps, recorded);
      continue;
    }
    const t = await waitForTurnEnd(deps, step.turnId!, { timeoutMs: opts.stepTimeoutMs, pollMs: opts.pollMs }, signal);
    if (!t) {
      if (signal?.aborted) return view(run);
      Object.assign(step, { outcome: 'failed', reason: `the agent did not finish this step within ${Math.round(opts.stepTimeoutMs / 1000)} s`, at: Date.now() });
    } else if (t.status === 'replied') {
      const reply = await lastReply(deps.db, step.turnId!);
      Object.assign(step, { outcome: 'done', at: Date.now(), ...(reply ? { reply } : {}) });
    } else {
      Object.assign(step, { outcome: 'failed', reason: t.failure ?? 'the agent turn failed', at: Date.now() });
    }
    if (step.outcome === 'failed') skipRest(run, i + 1, 'an earlier step failed');
    await save(deps.db, run);
  }
}

/** Starts (or, on a retried job, continues) the run for one firing of a live workflow's scheduler. */
export async function fireRun(deps: AgentDeps, workflowId: string, jobId: string, scheduledFor: number, opts: RunOptions, signal?: AbortSignal) {
  const w = await workflowsRepository(deps.db).findById(workflowId);
  if (!w || w.status !== 'live') return null;
  const run = await ensureRun(deps.db, w, jobId, scheduledFor);
  return advanceRun(deps, run.id, opts, signal);
}

/**
 * A gate card was decided: approving continues the run, dismissing ends it (cancelled). Returns the
 * run id to advance, or null when the card is not a gate or the decision was already taken.
 */
export async function decideGate(db: Db, cardId: string, approved: boolean): Promise<string | null> {
  const card = await db('review_cards').where({ id: cardId, source_type: 'workflow_gate' }).first<{ payload: { runId?: string } } | undefined>('payload');
  const runId = card?.payload.runId;
  if (!runId) return null;
  for (;;) {
    const run = await load(db, runId);
    if (!run || TERMINAL.includes(run.status)) return null;
    const i = run.steps.findIndex((s) => s.cardId === cardId && s.outcome === 'waiting_for_gate');
    if (i < 0) return null;
    if (approved) {
      // The gate is the human ok; the step itself still runs as a turn.
      Object.assign(run.steps[i]!, { outcome: 'pending', gate: undefined, at: Date.now() });
      run.status = 'running';
    } else {
      Object.assign(run.steps[i]!, { outcome: 'skipped', reason: 'dismissed at its gate', at: Date.now() });
      skipRest(run, i + 1, 'the run was stopped at a gate');
      run.status = 'cancelled';
      run.finishedAt = Date.now();
    }
    if (await save(db, run)) return runId;
  }
}

function view(run: RunState): RunView {
  return {
    runId: run.id,
    workflowId: run.workflowId,
    status: run.status,
    workflowVersion: run.workflowVersion,
    scheduledFor: run.scheduledFor,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    steps: run.steps.map(publicStep),
    summary: run.summary,
    deliveredTo: run.deliveredTo,
  };
}

/**
 * Called once a gate card was approved or dismissed (after that decision committed): records the
 * decision on the run and queues the run to move on. A card that is not a gate is ignored.
 */
export async function continueAfterGate(deps: Pick<AgentDeps, 'db' | 'queues'>, cardId: string, approved: boolean): Promise<void> {
  const runId = await decideGate(deps.db, cardId, approved);
  if (!runId || !approved) return;
  await enqueue(deps.queues, workflowAdvance, { runId }, { jobId: `wfadv-${runId}-${cardId}` });
}
