import { dispatchTurn, recordTurn, type AgentDeps } from '../agent/messages/agent.service.js';
import { waitForTurnEnd } from '../agent/messages/turn-wait.js';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { newId } from '../ids.js';
import { enqueue } from '../jobs/registry.js';
import { workflowAdvance } from '../jobs/workflow-runs.js';
import { addCard, gateRunId } from '../review/cards/doors.js';
import { deliverToDestination } from './destinations.service.js';
import { closeRun, failStep, skipRest, stopRun } from './run-state.js';
import { runsRepository, TERMINAL, type RunState, type RunStepState } from './runs.repository.js';
import { publicStep, workflowsRepository } from './workflows.repository.js';
import type { RunView, WorkflowRow } from './workflows.types.js';

/**
 * `stepTimeoutMs`: how long one step may take the agent before the step fails. `pollMs`: the longest
 * the runner goes without reading the step's turn (the turn's done notice wakes it sooner).
 * `passesPerJob`, `jobSliceMs`, `yieldDelayMs`: how much of a worker one job may take before the run
 * is handed to a new job, and how long that job waits in the queue.
 */
export type RunOptions = Omit<Config['workflows'], 'concurrency'>;

/** A gate decision retries a run another writer saved in between this many times. */
const DECIDE_ATTEMPTS = 5;

class LostRace extends Error {}

/** The run of one scheduler firing: made once per BullMQ job id, found again on a retry. */
async function ensureRun(db: Db, w: WorkflowRow, jobId: string, scheduledFor: number): Promise<RunState> {
  const steps: RunStepState[] = w.steps.map((s) => ({
    stepId: s.id,
    title: s.title,
    details: s.details,
    ...(s.gate ? { gate: s.gate } : {}),
    outcome: 'pending',
  }));
  return runsRepository(db).ensure(
    {
      id: newId('run'),
      workflowId: w.id,
      accountId: w.accountId,
      status: 'running',
      workflowVersion: w.version,
      scheduledFor,
      startedAt: Date.now(),
      steps,
    },
    jobId,
  );
}

async function finish(deps: AgentDeps, run: RunState, w: WorkflowRow): Promise<void> {
  closeRun(run, run.steps.some((s) => s.outcome === 'failed') ? 'failed' : 'done', w.name);
  if (w.deliverTo && run.status === 'done' && (await deliverToDestination(deps.db, run.accountId, w.deliverTo, run.id, run.summary!))) {
    run.deliveredTo = w.deliverTo;
  }
  await runsRepository(deps.db).save(run);
}

/** Hands the run to a fresh job after a short delay, so one run never holds a worker of the pool. */
async function handBack(deps: AgentDeps, run: RunState, opts: RunOptions): Promise<void> {
  // Unique per hand-back: a run waiting on a long turn keeps its revision, and this job may itself be
  // the previous hand-back (BullMQ ignores an add whose id is taken).
  await enqueue(deps.queues, workflowAdvance, { runId: run.id }, { why: 'handover', delay: opts.yieldDelayMs });
}

/**
 * Moves a run forward from wherever it stands: each step in order becomes an agent turn (queued behind
 * the account's current work), a gated step opens an approval card and the run waits. Safe to call
 * twice or after a crash: progress is in the row, and every save is conditional on its revision.
 *
 * One call makes at most `passesPerJob` passes and waits at most `jobSliceMs`; a run not finished by
 * then is handed to a new `workflow.advance` job queued behind everyone else's (see `handBack`).
 */
export async function advanceRun(deps: AgentDeps, runId: string, opts: RunOptions, signal?: AbortSignal): Promise<RunView | null> {
  const runs = runsRepository(deps.db);
  const sliceEnd = Date.now() + opts.jobSliceMs;
  for (let pass = 0; ; pass++) {
    const run = await runs.load(runId);
    if (!run) return null;
    if (TERMINAL.includes(run.status)) return view(run);
    if (pass >= opts.passesPerJob || Date.now() >= sliceEnd) {
      // A run waiting at its gate needs no job: the decision queues one.
      if (run.status !== 'waiting') await handBack(deps, run, opts);
      return view(run);
    }
    const w = await workflowsRepository(deps.db).findById(run.workflowId);
    if (w?.status !== 'live') {
      stopRun(run, w ? 'the workflow was paused' : 'the workflow was deleted', w?.name);
      await runs.save(run);
      continue;
    }
    const i = run.steps.findIndex((s) => s.outcome !== 'done' && s.outcome !== 'skipped');
    if (i < 0) {
      await finish(deps, run, w);
      continue;
    }
    const step = run.steps[i]!;
    if (step.outcome === 'failed') {
      // A run saved with a failed step but not yet ended (by an older version of this code): end it.
      failStep(run, i, step.reason ?? 'the agent turn failed', w.name);
      await runs.save(run);
      continue;
    }
    if (step.outcome === 'waiting_for_gate') return view(run);
    if (step.outcome === 'pending' && step.gate) {
      const cardId = newId('card');
      await deps.db.transaction(async (trx) => {
        Object.assign(step, { outcome: 'waiting_for_gate', cardId, at: Date.now() });
        run.status = 'waiting';
        if (!(await runsRepository(trx).save(run))) return;
        await addCard(trx, {
          id: cardId,
          accountId: run.accountId,
          kind: 'approval',
          sourceType: 'workflow_gate',
          title: step.gate!.label ?? `Continue "${w.name}": ${step.title}`,
          prompt: `Step ${i + 1} of ${run.steps.length} waits for your ok before it acts: ${step.title}`,
          payload: { workflowId: run.workflowId, runId: run.id, stepId: step.stepId, details: step.details },
          actions: ['approve', 'dismiss'],
          primaryLabel: step.gate!.label ?? 'Continue',
        });
      });
      continue;
    }
    if (step.outcome === 'pending') {
      const text = `Workflow "${w.name}", step ${i + 1} of ${run.steps.length}: ${step.title}${step.details ? `\n${step.details}` : ''}`;
      // The step is claimed and its turn recorded in one transaction: a second runner either sees the
      // step running with its turn, or its own conditional save fails and nothing of it is kept.
      const recorded = await deps.db
        .transaction(async (trx) => {
          const r = await recordTurn(trx, deps.config, {
            accountId: run.accountId,
            kind: 'workflow_run',
            origin: 'workflow',
            text,
            mode: 'queue',
          });
          Object.assign(step, { outcome: 'running', turnId: r.turn.id, at: Date.now() });
          if (!(await runsRepository(trx).save(run))) throw new LostRace();
          return r;
        })
        .catch((err: unknown) => {
          if (err instanceof LostRace) return null;
          throw err;
        });
      if (recorded) await dispatchTurn(deps, recorded);
      continue;
    }
    // The step's time runs from when it was claimed, so a run handed from job to job keeps one deadline.
    const deadline = (step.at ?? run.startedAt) + opts.stepTimeoutMs;
    const waitMs = Math.min(deadline, sliceEnd) - Date.now();
    const t =
      (await runs.turnEnd(step.turnId!)) ??
      (waitMs > 0 ? await waitForTurnEnd(deps, step.turnId!, { timeoutMs: waitMs, pollMs: opts.pollMs }, signal) : null);
    if (!t) {
      if (signal?.aborted) return view(run);
      // Only this job's slice is over: the next pass hands the run on.
      if (Date.now() < deadline) continue;
      failStep(run, i, `the agent did not finish this step within ${Math.round(opts.stepTimeoutMs / 1000)} s`, w.name);
    } else if (t.status === 'replied') {
      const reply = await runs.lastReply(step.turnId!);
      Object.assign(step, { outcome: 'done', at: Date.now(), ...(reply ? { reply } : {}) });
    } else {
      failStep(run, i, t.failure ?? 'the agent turn failed', w.name);
    }
    await runs.save(run);
  }
}

/** Starts (or, on a retried job, continues) the run for one firing of a live workflow's scheduler. */
export async function fireRun(
  deps: AgentDeps,
  workflowId: string,
  jobId: string,
  scheduledFor: number,
  opts: RunOptions,
  signal?: AbortSignal,
) {
  const w = await workflowsRepository(deps.db).findById(workflowId);
  if (w?.status !== 'live') return null;
  const run = await ensureRun(deps.db, w, jobId, scheduledFor);
  return advanceRun(deps, run.id, opts, signal);
}

/**
 * A gate card was decided: approving continues the run, dismissing ends it (cancelled). Returns the
 * run id to advance, or null when the card is not a gate or the decision was already taken.
 */
export async function decideGate(db: Db, cardId: string, approved: boolean): Promise<string | null> {
  const runId = await gateRunId(db, cardId);
  if (!runId) return null;
  const runs = runsRepository(db);
  for (let attempt = 0; attempt < DECIDE_ATTEMPTS; attempt++) {
    const run = await runs.load(runId);
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
    if (await runs.save(run)) return runId;
  }
  throw new Error(`run ${runId} kept changing while its gate was decided; decide it again`);
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
  const runId = (await decideGate(deps.db, cardId, approved)) ?? (approved ? await approvedGateWaiting(deps.db, cardId) : null);
  if (!runId || !approved) return;
  // Keyed by the gate: while one advance waits or runs, a repeat adds nothing; advancing twice is harmless.
  await enqueue(deps.queues, workflowAdvance, { runId }, { why: 'gate', cardId });
}

/**
 * The run of a gate already approved whose step has not started: a follow-up that died between deciding the
 * gate and queueing the advance finds it here when it runs again, and queues the advance it missed.
 */
async function approvedGateWaiting(db: Db, cardId: string): Promise<string | null> {
  const runId = await gateRunId(db, cardId);
  const run = runId ? await runsRepository(db).load(runId) : null;
  if (!run || TERMINAL.includes(run.status)) return null;
  return run.steps.some((s) => s.cardId === cardId && s.outcome === 'pending') ? run.id : null;
}
