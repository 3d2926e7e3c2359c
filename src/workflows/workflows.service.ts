import { getAccount } from '../accounts/accounts.service.js';
import { auditedWrite, type Actor } from '../audit/audit.service.js';
import type { Db, Queryable, Trx } from '../db.js';
import type { Deps } from '../deps.js';
import { NotFound, Rejected } from '../errors.js';
import { newId } from '../ids.js';
import { workflowRun } from '../jobs/workflow-runs.js';
import { stopRuns } from './run-state.js';
import { resolveSchedule, upcomingRuns } from './schedule.js';
import { workflowsRepository } from './workflows.repository.js';
import type { RunView, WorkflowInput, WorkflowPatch, WorkflowRow, WorkflowStep, WorkflowView } from './workflows.types.js';

export type WorkflowDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'queues'>;

export function view(w: WorkflowRow, baseUrl: string): WorkflowView {
  return {
    workflowId: w.id,
    name: w.name,
    description: w.description,
    status: w.status,
    scheduleText: w.scheduleText,
    scheduleEcho: w.scheduleEcho,
    scheduleError: w.scheduleError,
    deliverTo: w.deliverTo,
    nextRunAt: w.status === 'live' ? w.nextRunAt : null,
    version: w.version,
    steps: w.steps,
    // This service has no dashboard: the link is the API's own account of what the workflow did.
    url: `${baseUrl}/api/v1/workflows/${w.id}/runs`,
  };
}

const schedulerId = (workflowId: string) => workflowRun.key({ workflowId });

/** The schedule fields a write stores: resolved now, in the account's time zone. */
async function resolved(q: Queryable, accountId: string, text: string) {
  const tz = await workflowsRepository(q).accountTimeZone(accountId);
  const r = resolveSchedule(text, tz);
  return r.ok
    ? { scheduleEcho: r.echo, scheduleError: null, schedule: r.schedule, nextRunAt: r.nextRunAt }
    : { scheduleEcho: null, scheduleError: r.error, schedule: null, nextRunAt: null };
}

/** How many coming runs a schedule preview lists. */
export const PREVIEW_RUNS = 5;

/**
 * What a schedule in plain words would do for this account, before anything is saved: the same reading a
 * write stores (resolveSchedule, in the account's time zone), with the next PREVIEW_RUNS runs. Words it
 * cannot read give their sentence in `error`, as a write would store it in `scheduleError`.
 */
export async function previewSchedule(
  db: Db,
  accountId: string,
  text: string,
  now: number = Date.now(),
): Promise<{ echo: string | null; error: string | null; timeZone: string; nextRuns: number[] }> {
  const timeZone = await workflowsRepository(db).accountTimeZone(accountId);
  const r = resolveSchedule(text, timeZone, now);
  return r.ok
    ? { echo: r.echo, error: null, timeZone, nextRuns: upcomingRuns(r.schedule, PREVIEW_RUNS, now) }
    : { echo: null, error: r.error, timeZone, nextRuns: [] };
}

/** A step sent back with its `id` keeps it (and its run history); a new one gets a fresh id. */
function stepsFrom(input: WorkflowInput['steps'], known: Set<string>): WorkflowStep[] {
  const seen = new Set<string>();
  return input.map((s, i) => {
    if (s.id !== undefined) {
      if (!known.has(s.id)) throw new Rejected(`steps.${i}.id ${s.id} is not a step of this workflow; leave id out for a new step`);
      if (seen.has(s.id)) throw new Rejected(`steps.${i}.id ${s.id} appears twice`);
      seen.add(s.id);
    }
    return { id: s.id ?? newId('step'), title: s.title, details: s.details ?? '', ...(s.gate ? { gate: s.gate } : {}) };
  });
}

async function checkDestination(q: Queryable, accountId: string, deliverTo: string | undefined | null): Promise<void> {
  if (deliverTo === undefined || deliverTo === null) return;
  const names = (await workflowsRepository(q).destinations(accountId)).map((d) => d.name);
  if (names.includes(deliverTo)) return;
  throw new Rejected(
    names.length
      ? `deliverTo must be one of the account's connected destinations: ${names.join(', ')}`
      : 'deliverTo must be a connected destination, and this account has none yet',
    { options: names },
  );
}

/**
 * Makes BullMQ's job scheduler match the row: live with a readable schedule → upserted; otherwise
 * removed. Idempotent; a failure is logged and repaired by the maintenance sweep.
 */
export async function syncScheduler(deps: WorkflowDeps, w: WorkflowRow | { id: string; status: 'deleted' }): Promise<void> {
  const queue = deps.queues.get(workflowRun.queue);
  if (!queue) throw new Error(`queue ${workflowRun.queue} is not open in this process`);
  try {
    if ('schedule' in w && w.status === 'live' && w.schedule) {
      const { pattern, every, startDate, tz } = w.schedule;
      await queue.upsertJobScheduler(schedulerId(w.id), pattern ? { pattern, tz } : { every: every!, startDate }, {
        name: workflowRun.name,
        data: { workflowId: w.id },
        opts: workflowRun.options,
      });
    } else {
      await queue.removeJobScheduler(schedulerId(w.id));
    }
  } catch (err) {
    deps.logger.warn({ workflowId: w.id, err: (err as Error).message }, 'job scheduler not synced; the sweep will repair it');
  }
}

/**
 * Writes a new workflow in the caller's transaction: live, or paused awaiting acceptance when the
 * agent proposes it (a paused workflow needs no scheduler, so the agent's tools can call this alone).
 */
export async function insertWorkflow(
  q: Queryable,
  accountId: string,
  input: WorkflowInput,
  opts: { proposedByAgent?: boolean } = {},
): Promise<WorkflowRow> {
  await checkDestination(q, accountId, input.deliverTo);
  const at = Date.now();
  const w: WorkflowRow = {
    id: newId('wf'),
    accountId,
    name: input.name,
    description: input.description ?? null,
    status: opts.proposedByAgent ? 'paused' : 'live',
    scheduleText: input.scheduleText,
    ...(await resolved(q, accountId, input.scheduleText)),
    deliverTo: input.deliverTo ?? null,
    version: 1,
    steps: stepsFrom(input.steps, new Set()),
    proposedByAgent: opts.proposedByAgent ?? false,
    acceptedAt: opts.proposedByAgent ? null : at,
    createdAt: at,
    updatedAt: at,
  };
  await workflowsRepository(q).insert(w);
  return w;
}

/** POST /workflows: a live workflow, its job scheduler upserted after commit. */
/**
 * POST /workflows. An account keeps at most `workflows.perAccount` (WORKFLOWS_PER_ACCOUNT); one more is 409
 * `rejected` and nothing is written. The account row is locked for the count, so racing creates cannot
 * pass it together.
 */
export async function createWorkflow(deps: WorkflowDeps, actor: Actor, input: WorkflowInput): Promise<WorkflowView> {
  const cap = deps.config.workflows.perAccount;
  const row = await auditedWrite(deps.db, actor, async (trx) => {
    await getAccount(trx, actor.accountId, true);
    if ((await workflowsRepository(trx).countKept(actor.accountId)) >= cap) {
      throw new Rejected(`account already has ${cap} workflows; delete one before creating another`);
    }
    const w = await insertWorkflow(trx, actor.accountId, input);
    return { result: w, targetId: w.id, status: 201 };
  });
  await syncScheduler(deps, row);
  return view(row, deps.config.baseUrl);
}

async function change(
  deps: WorkflowDeps,
  actor: Actor,
  id: string,
  fn: (w: WorkflowRow, trx: Trx) => Promise<Partial<WorkflowRow>>,
): Promise<WorkflowRow> {
  const row = await auditedWrite(deps.db, actor, async (trx) => {
    const repo = workflowsRepository(trx);
    const current = await repo.find(actor.accountId, id, true);
    if (!current) throw new NotFound();
    const changes = await fn(current, trx);
    const next: WorkflowRow = { ...current, ...changes };
    const changed = (Object.keys(changes) as Array<keyof WorkflowRow>).some(
      (k) => JSON.stringify(changes[k]) !== JSON.stringify(current[k]),
    );
    // A paused workflow stops its open runs with the pause, not whenever a runner next looks.
    if (changes.status === 'paused' && current.status !== 'paused') await stopRuns(trx, id, current.name, 'the workflow was paused');
    if (changed) {
      next.version = current.version + 1;
      next.updatedAt = Date.now();
      await repo.update(id, { ...changes, version: next.version, updatedAt: next.updatedAt });
    }
    return { result: next, targetId: id };
  });
  await syncScheduler(deps, row);
  return row;
}

/** PATCH: any create field plus `status`; `steps` replaces the list; a changed `scheduleText` is re-read. */
export async function updateWorkflow(deps: WorkflowDeps, actor: Actor, id: string, patch: WorkflowPatch): Promise<WorkflowView> {
  const row = await change(deps, actor, id, async (w, trx) => {
    const changes: Partial<WorkflowRow> = {};
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.deliverTo !== undefined) {
      await checkDestination(trx, actor.accountId, patch.deliverTo);
      changes.deliverTo = patch.deliverTo;
    }
    if (patch.steps !== undefined) changes.steps = stepsFrom(patch.steps, new Set(w.steps.map((s) => s.id)));
    if (patch.status !== undefined) {
      changes.status = patch.status;
      if (patch.status === 'live' && w.acceptedAt === null) changes.acceptedAt = Date.now();
    }
    const reread = patch.scheduleText !== undefined && patch.scheduleText !== w.scheduleText;
    if (reread || (patch.status === 'live' && w.status === 'paused')) {
      changes.scheduleText = patch.scheduleText ?? w.scheduleText;
      Object.assign(changes, await resolved(trx, actor.accountId, changes.scheduleText));
    }
    return changes;
  });
  return view(row, deps.config.baseUrl);
}

/** Idempotent: pausing a paused workflow changes nothing (and keeps its version). */
export async function pauseWorkflow(deps: WorkflowDeps, actor: Actor, id: string): Promise<WorkflowView> {
  const row = await change(deps, actor, id, async (w) => (w.status === 'paused' ? {} : { status: 'paused' }));
  return view(row, deps.config.baseUrl);
}

/** Idempotent; schedules the next run from the cadence, and accepts an agent-proposed workflow. */
export async function resumeWorkflow(deps: WorkflowDeps, actor: Actor, id: string): Promise<WorkflowView> {
  const row = await change(deps, actor, id, async (w, trx) => {
    if (w.status === 'live') return {};
    return {
      status: 'live',
      ...(await resolved(trx, actor.accountId, w.scheduleText)),
      ...(w.acceptedAt === null ? { acceptedAt: Date.now() } : {}),
    };
  });
  return view(row, deps.config.baseUrl);
}

/** Removes the workflow from every read and cancels its scheduler; its runs route answers 404 after. */
export async function deleteWorkflow(deps: WorkflowDeps, actor: Actor, id: string): Promise<{ ok: true; name: string }> {
  const name = await auditedWrite(deps.db, actor, async (trx) => {
    const repo = workflowsRepository(trx);
    const w = await repo.find(actor.accountId, id, true);
    if (!w) throw new NotFound();
    await repo.markDeleted(id, Date.now());
    await stopRuns(trx, id, w.name, 'the workflow was deleted');
    return { result: w.name, targetId: id };
  });
  await syncScheduler(deps, { id, status: 'deleted' });
  return { ok: true, name };
}

export async function listWorkflows(db: Db, baseUrl: string, accountId: string): Promise<WorkflowView[]> {
  return (await workflowsRepository(db).list(accountId)).map((w) => view(w, baseUrl));
}

export async function listRuns(db: Db, accountId: string, id: string, limit: number): Promise<RunView[]> {
  const repo = workflowsRepository(db);
  if (!(await repo.find(accountId, id))) throw new NotFound();
  return repo.runs(id, limit);
}

/** Live workflows the scheduler repair reads from Postgres at once. */
const REPAIR_PAGE = 500;

/**
 * For the maintenance sweep: every live workflow with a schedule has its job scheduler (an upsert
 * lost to a Redis outage is repaired); one listing of the schedulers, then the live workflows in pages
 * of REPAIR_PAGE by id (the pass ends at the first short page), registering only the missing ones.
 */
export async function repairSchedulers(deps: WorkflowDeps, pageSize = REPAIR_PAGE): Promise<number> {
  const queue = deps.queues.get(workflowRun.queue);
  if (!queue) return 0;
  const present = new Set((await queue.getJobSchedulers(0, -1)).map((s) => s.key));
  const repo = workflowsRepository(deps.db);
  let repaired = 0;
  for (let after: string | null = null; ; ) {
    const page = await repo.listLive(after, pageSize);
    const missing = page.filter((w) => w.schedule && !present.has(schedulerId(w.id)));
    for (const w of missing) await syncScheduler(deps, w);
    repaired += missing.length;
    if (page.length < pageSize) return repaired;
    after = page[page.length - 1]!.id;
  }
}
