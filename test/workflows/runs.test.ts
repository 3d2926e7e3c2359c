import { describe, expect } from 'vitest';
import { RunsResponse, WorkflowResponse } from '../../api/routes/workflows.schemas.js';
import { runAdmin } from '../../src/admin/commands.js';
import { workflowRun } from '../../src/jobs/workflow-runs.js';
import { advanceRun, continueAfterGate, decideGate, fireRun, type RunOptions } from '../../src/workflows/runs.service.js';
import { repairSchedulers, syncScheduler } from '../../src/workflows/workflows.service.js';
import { workflowsRepository } from '../../src/workflows/workflows.repository.js';
import { startPools } from '../../workers/main.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { waitFor } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

let tenant: { accountId: string; token: string };
let opts: RunOptions;

it.override('options', { env: { WORKFLOW_POLL_MS: '50' } });
it.beforeAll(async ({ env, pools }) => {
  // Started here, not through the fixture's options: a test restarts them.
  pools = await startPools(env.deps, ['agent-turns', 'workflow-runs']);
  tenant = await env.tenant();
  opts = { ...env.config.workflows, stepTimeoutMs: 20_000, pollMs: 50 };
});
it.afterAll(({ pools }) => pools.close());

async function create(env: TestEnv, body: object) {
  const res = await env.api().post('/api/v1/workflows').set(auth(tenant.token)).send(body);
  expect(res.status).toBe(201);
  return WorkflowResponse.parse(res.body).workflow;
}
const runs = async (env: TestEnv, id: string) =>
  RunsResponse.parse((await env.api().get(`/api/v1/workflows/${id}/runs`).set(auth(tenant.token))).body).runs;

describe('workflow runs', () => {
  it('are fired by the job scheduler and run every step through the agent, delivering the summary', async ({ env }) => {
    await runAdmin(['destination', 'add', '--account', tenant.accountId, '--name', 'digest'], { db: env.deps.db, config: env.config });
    const w = await create(env, {
      name: 'Morning check',
      scheduleText: 'every day at 9am',
      deliverTo: 'digest',
      steps: [{ title: 'What is waiting' }, { title: 'Say hello' }],
    });
    // Shorten the cadence for the test: the same scheduler, firing every 700 ms.
    const row = (await workflowsRepository(env.deps.db).findById(w.workflowId))!;
    await syncScheduler(env.deps, { ...row, schedule: { every: 700, tz: 'UTC' } });
    await waitFor(async () => (await runs(env, w.workflowId)).some((r) => r.status === 'done'), 'a finished run', 30_000);
    await syncScheduler(env.deps, { id: w.workflowId, status: 'deleted' });
    const [run] = (await runs(env, w.workflowId)).filter((r) => r.status === 'done');
    expect(run!.steps.map((s) => [s.title, s.outcome])).toEqual([
      ['What is waiting', 'done'],
      ['Say hello', 'done'],
    ]);
    expect(run!.steps.every((s) => s.turnId?.startsWith('turn_'))).toBe(true);
    expect(run).toMatchObject({ workflowVersion: 1, deliveredTo: 'digest', finishedAt: expect.any(Number) });
    expect(run!.summary).toMatch(/^Morning check run done\./);
    const delivered = await runAdmin(['destination', 'deliveries', '--account', tenant.accountId, '--name', 'digest'], {
      db: env.deps.db,
      config: env.config,
    });
    expect(delivered.deliveries).toEqual(expect.arrayContaining([expect.objectContaining({ runId: run!.runId, text: run!.summary })]));
  });

  it('start one run, with one turn per step, when the same firing is delivered twice at once', async ({ env }) => {
    const w = await create(env, { name: 'Twice', scheduleText: 'weekly', steps: [{ title: 'one' }, { title: 'two' }] });
    const [a, b] = await Promise.all([
      fireRun(env.deps, w.workflowId, 'job-same', Date.now(), opts),
      fireRun(env.deps, w.workflowId, 'job-same', Date.now(), opts),
    ]);
    expect(a!.runId).toBe(b!.runId);
    const all = await runs(env, w.workflowId);
    expect(all).toHaveLength(1);
    expect(all[0]!.status).toBe('done');
    const turns = await rows(env, 'agent_turns', { account_id: tenant.accountId, kind: 'workflow_run' })
      .orderBy('created_at')
      .orderBy('id')
      .select('text');
    const mine = turns.filter((t: { text: string }) => t.text.startsWith('Workflow "Twice"'));
    expect(mine.map((t: { text: string }) => t.text.split('\n')[0])).toEqual([
      'Workflow "Twice", step 1 of 2: one',
      'Workflow "Twice", step 2 of 2: two',
    ]);
  });

  it("wake on the step's turn finishing, not on the poll interval", async ({ env }) => {
    const w = await create(env, { name: 'Prompt', scheduleText: 'weekly', steps: [{ title: 'one' }, { title: 'two' }] });
    // A poll interval far longer than the step timeout: only the turns' done notices can move the run.
    const run = await fireRun(env.deps, w.workflowId, 'job-notice', Date.now(), { ...opts, pollMs: 3_600_000 });
    expect(run!.status).toBe('done');
    expect(run!.steps.map((s) => s.outcome)).toEqual(['done', 'done']);
  });

  it('wait at a gate with an approval card; approving continues, and the wait survives a restart', async ({ env, pools }) => {
    const w = await create(env, {
      name: 'Gated',
      scheduleText: 'weekly',
      steps: [{ title: 'prepare' }, { title: 'send it', gate: { on: true, label: 'OK to send' } }, { title: 'report' }],
    });
    const waiting = (await fireRun(env.deps, w.workflowId, 'job-gate-1', Date.now(), opts))!;
    expect(waiting.status).toBe('waiting');
    expect(waiting.steps.map((s) => s.outcome)).toEqual(['done', 'waiting_for_gate', 'pending']);
    const cardId = waiting.steps[1]!.cardId!;
    const card = await row(env, 'review_cards', { id: cardId, account_id: tenant.accountId });
    expect(card).toMatchObject({ kind: 'approval', source_type: 'workflow_gate', title: 'OK to send', status: 'pending' });
    // A worker restart in between: a fresh pool set, and advancing again changes nothing until a decision.
    await pools.close();
    pools = await startPools(env.deps, ['agent-turns', 'workflow-runs']);
    expect((await advanceRun(env.deps, waiting.runId, opts))!.status).toBe('waiting');
    expect(await decideGate(env.deps.db, cardId, true)).toBe(waiting.runId);
    expect(await decideGate(env.deps.db, cardId, true)).toBeNull();
    const done = (await advanceRun(env.deps, waiting.runId, opts))!;
    expect(done.status).toBe('done');
    expect(done.steps.map((s) => s.outcome)).toEqual(['done', 'done', 'done']);
  });

  it('move on through the workflow-runs pool once a gate is approved', async ({ env }) => {
    const w = await create(env, {
      name: 'Pool gate',
      scheduleText: 'weekly',
      steps: [{ title: 'ask first', gate: { on: true } }, { title: 'then act' }],
    });
    const waiting = (await fireRun(env.deps, w.workflowId, 'job-gate-3', Date.now(), opts))!;
    await continueAfterGate(env.deps, waiting.steps[0]!.cardId!, true);
    await waitFor(async () => (await runs(env, w.workflowId))[0]?.status === 'done', 'the run to finish', 20_000);
    expect((await runs(env, w.workflowId))[0]!.steps.map((s) => s.outcome)).toEqual(['done', 'done']);
  });

  it('continue when a person approves the gate card through the review API, and cancel when one dismisses it', async ({ env }) => {
    const w = await create(env, {
      name: 'Via review',
      scheduleText: 'weekly',
      steps: [{ title: 'check', gate: { on: true, label: 'Go ahead?' } }, { title: 'act' }],
    });
    const first = (await fireRun(env.deps, w.workflowId, 'job-review-1', Date.now(), opts))!;
    const card = await env.api().get(`/api/v1/review/${first.steps[0]!.cardId}`).set(auth(tenant.token));
    expect(card.body.item).toMatchObject({ kind: 'approval', sourceType: 'workflow_gate', status: 'pending', title: 'Go ahead?' });
    expect(card.body.item.actions).toContain('approve');
    const ok = await env.api().post(`/api/v1/review/${first.steps[0]!.cardId}/answer`).set(auth(tenant.token)).send({ action: 'approve' });
    expect(ok.status).toBe(200);
    await runFollowUps(env.deps);
    await waitFor(
      async () => (await runs(env, w.workflowId)).find((r) => r.runId === first.runId)?.status === 'done',
      'the approved run to finish',
      20_000,
    );
    const second = (await fireRun(env.deps, w.workflowId, 'job-review-2', Date.now(), opts))!;
    const no = await env
      .api()
      .post(`/api/v1/review/${second.steps[0]!.cardId}/dismiss`)
      .set(auth(tenant.token))
      .send({ reason: 'not this week' });
    expect(no.status).toBe(200);
    await runFollowUps(env.deps);
    expect((await runs(env, w.workflowId)).find((r) => r.runId === second.runId)!.status).toBe('cancelled');
  });

  it('end when the gate card is dismissed', async ({ env }) => {
    const w = await create(env, {
      name: 'Dismissed',
      scheduleText: 'weekly',
      steps: [{ title: 'ask', gate: { on: true } }, { title: 'after' }],
    });
    const waiting = (await fireRun(env.deps, w.workflowId, 'job-gate-2', Date.now(), opts))!;
    await decideGate(env.deps.db, waiting.steps[0]!.cardId!, false);
    const [run] = await runs(env, w.workflowId);
    expect(run).toMatchObject({ status: 'cancelled', finishedAt: expect.any(Number) });
    expect(run!.steps.map((s) => [s.outcome, s.reason])).toEqual([
      ['skipped', 'dismissed at its gate'],
      ['skipped', 'the run was stopped at a gate'],
    ]);
  });

  it('come from the agent as paused proposals that resume accepts', async ({ env }) => {
    const res = await env
      .api()
      .post('/api/v1/agent/messages')
      .set(auth(tenant.token))
      .send({ text: 'propose a workflow to review new trials every weekday at 8am', waitSeconds: 20 });
    expect(res.status).toBe(200);
    const listed = (await env.api().get('/api/v1/workflows').set(auth(tenant.token))).body.workflows as Array<{
      workflowId: string;
      name: string;
      status: string;
      nextRunAt: number | null;
    }>;
    const proposed = listed.find((w) => w.name === 'Review new trials');
    expect(proposed).toMatchObject({ status: 'paused', nextRunAt: null });
    const card = await rows(env, 'review_cards', { account_id: tenant.accountId, source_type: 'workflow_proposal' })
      .orderBy('created_at', 'desc')
      .first();
    expect(card.payload.workflowId).toBe(proposed!.workflowId);
    // Approving the proposal card accepts the workflow: it goes live.
    const approved = await env.api().post(`/api/v1/review/${card.id}/answer`).set(auth(tenant.token)).send({ action: 'approve' });
    expect(approved.status).toBe(200);
    const resumed = await env.api().post(`/api/v1/workflows/${proposed!.workflowId}/resume`).set(auth(tenant.token));
    expect(resumed.body.workflow.version).toBe(2);
    expect(resumed.body.workflow).toMatchObject({
      status: 'live',
      scheduleEcho: 'At 08:00, only on Monday, Tuesday, Wednesday, Thursday, and Friday (UTC)',
    });
  });

  it('get their job scheduler back from the maintenance sweep after it was lost', async ({ env }) => {
    const w = await create(env, { name: 'Repair me', scheduleText: 'every day at 7am', steps: [{ title: 'x' }] });
    const queue = env.deps.queues.get('workflow-runs')!;
    await queue.removeJobScheduler(workflowRun.key({ workflowId: w.workflowId }));
    expect(await repairSchedulers(env.deps)).toBeGreaterThanOrEqual(1);
    expect((await queue.getJobScheduler(workflowRun.key({ workflowId: w.workflowId })))?.pattern).toBe('0 7 * * *');
    expect(await repairSchedulers(env.deps)).toBe(0);
  });

  it('get their job schedulers back from a repair that reads the live workflows a page at a time', async ({ env }) => {
    const made = [];
    for (const n of [1, 2, 3, 4, 5])
      made.push(await create(env, { name: `Paged ${n}`, scheduleText: 'every day at 7am', steps: [{ title: 'x' }] }));
    const queue = env.deps.queues.get('workflow-runs')!;
    for (const w of made) await queue.removeJobScheduler(workflowRun.key({ workflowId: w.workflowId }));
    // Pages of two: the five lost schedulers sit on different pages, the last page short.
    expect(await repairSchedulers(env.deps, 2)).toBe(5);
    for (const w of made) expect(await queue.getJobScheduler(workflowRun.key({ workflowId: w.workflowId }))).toBeDefined();
    expect(await repairSchedulers(env.deps, 2)).toBe(0);
  });

  it('skip a paused or deleted workflow', async ({ env }) => {
    const w = await create(env, { name: 'Paused one', scheduleText: 'weekly', steps: [{ title: 'x' }] });
    await env.api().post(`/api/v1/workflows/${w.workflowId}/pause`).set(auth(tenant.token));
    expect(await fireRun(env.deps, w.workflowId, 'job-paused', Date.now(), opts)).toBeNull();
    expect(await runs(env, w.workflowId)).toEqual([]);
  });
});
