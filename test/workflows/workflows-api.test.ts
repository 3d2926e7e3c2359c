import { describe, expect } from 'vitest';
import { DeleteWorkflowResponse, RunsResponse, WorkflowResponse, WorkflowsResponse } from '../../api/routes/workflows.schemas.js';
import { runAdmin } from '../../src/admin/commands.js';
import { workflowRun } from '../../src/jobs/workflow-runs.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

let tenant: { accountId: string; token: string };
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
});

const create = (env: TestEnv, body: unknown, t?: string) =>
  env
    .api()
    .post('/api/v1/workflows')
    .set(auth(t ?? tenant.token))
    .send(body as object);
const patch = (env: TestEnv, id: string, body: unknown) =>
  env
    .api()
    .patch(`/api/v1/workflows/${id}`)
    .set(auth(tenant.token))
    .send(body as object);
const scheduler = (env: TestEnv, id: string) => env.deps.queues.get('workflow-runs')!.getJobScheduler(workflowRun.key({ workflowId: id }));

const valid = {
  name: 'Weekly pipeline review',
  scheduleText: 'every Monday at 9am',
  steps: [
    { title: 'Pull new replies' },
    { title: 'Draft follow-ups', details: 'Only warm leads', gate: { on: true, label: 'OK to draft' } },
  ],
};

describe('POST /workflows', () => {
  it('creates a live workflow with its schedule read, its next run and a job scheduler', async ({ env }) => {
    const res = await create(env, { ...valid, description: 'Monday triage' });
    expect(res.status).toBe(201);
    const { workflow } = WorkflowResponse.parse(res.body);
    expect(workflow).toMatchObject({
      name: 'Weekly pipeline review',
      description: 'Monday triage',
      status: 'live',
      scheduleText: 'every Monday at 9am',
      scheduleEcho: 'At 09:00, only on Monday (UTC)',
      scheduleError: null,
      deliverTo: null,
      version: 1,
    });
    expect(workflow.nextRunAt).toBeGreaterThan(Date.now());
    expect(new Date(workflow.nextRunAt!).getUTCDay()).toBe(1);
    expect(workflow.steps).toEqual([
      { id: expect.stringMatching(/^step_/), title: 'Pull new replies', details: '' },
      {
        id: expect.stringMatching(/^step_/),
        title: 'Draft follow-ups',
        details: 'Only warm leads',
        gate: { on: true, label: 'OK to draft' },
      },
    ]);
    // The url leads somewhere this service answers: the workflow's runs, read with the same token.
    expect(workflow.url).toBe(`${env.config.baseUrl}/api/v1/workflows/${workflow.workflowId}/runs`);
    const followed = await env.api().get(new URL(workflow.url).pathname).set(auth(tenant.token));
    expect(followed.status).toBe(200);
    expect(RunsResponse.parse(followed.body).runs).toEqual([]);
    const s = await scheduler(env, workflow.workflowId);
    expect(s).toMatchObject({ pattern: '0 9 * * 1', tz: 'UTC', next: workflow.nextRunAt });
  });

  it('saves words it cannot read with scheduleError and schedules nothing', async ({ env }) => {
    const res = await create(env, { ...valid, scheduleText: 'whenever the moon is full-ish' });
    expect(res.status).toBe(201);
    const { workflow } = WorkflowResponse.parse(res.body);
    expect(workflow).toMatchObject({ status: 'live', scheduleEcho: null, nextRunAt: null });
    expect(workflow.scheduleError).toMatch(/could not understand/);
    expect(await scheduler(env, workflow.workflowId)).toBeUndefined();
  });

  it('reads the schedule in the account time zone', async ({ env }) => {
    const other = await env.tenant(undefined, 'Paris SAS');
    await runAdmin(['account', 'set-time-zone', '--account', other.accountId, '--time-zone', 'Europe/Paris'], {
      db: env.deps.db,
      config: env.config,
    });
    const { workflow } = WorkflowResponse.parse((await create(env, { ...valid, scheduleText: 'daily at 9am' }, other.token)).body);
    expect(workflow.scheduleEcho).toBe('At 09:00 (Europe/Paris time)');
    expect(new Date(workflow.nextRunAt!).getUTCHours()).toBe(8); // 09:00 CET
  });

  it.for([
    [{ ...valid, name: undefined }, 'name is required'],
    [{ ...valid, name: 'x'.repeat(121) }, 'name must be at most 120 characters'],
    [{ ...valid, name: '   ' }, 'name must not be empty'],
    [{ ...valid, scheduleText: 'x'.repeat(201) }, 'scheduleText must be at most 200 characters'],
    [{ ...valid, description: 'x'.repeat(241) }, 'description must be at most 240 characters'],
    [{ ...valid, steps: [] }, 'steps must have at least 1 item'],
    [{ ...valid, steps: Array.from({ length: 26 }, (_, i) => ({ title: `s${i}` })) }, 'steps must have at most 25 items'],
    [{ ...valid, steps: [{ title: 'a', details: '1\n2\n3\n4\n5\n6\n7\n8\n9' }] }, 'steps.0.details must be at most 8 lines'],
    [{ ...valid, steps: [{ title: 'a', gate: { on: false } }] }, 'steps.0.gate.on must be true'],
    [{ ...valid, steps: [{ title: 'a', gate: { on: true, color: 'red' } }] }, 'steps.0.gate has unknown field color'],
    [{ ...valid, steps: [{ title: 'a', owner: 'me' }] }, 'steps.0 has unknown field owner'],
    [{ ...valid, steps: [{ details: 'no title' }] }, 'steps.0.title is required'],
    [{ ...valid, cadence: 'weekly' }, 'body has unknown field cadence'],
    [{ ...valid, status: 'paused' }, 'body has unknown field status'],
  ])('refuses %j with 400 naming the field and the rule', async ([body, error], { env }) => {
    const before = (await env.api().get('/api/v1/workflows').set(auth(tenant.token))).body.workflows.length;
    const res = await create(env, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
    expect((await env.api().get('/api/v1/workflows').set(auth(tenant.token))).body.workflows.length).toBe(before);
  });

  it('accepts exactly 8 lines of details and 25 steps', async ({ env }) => {
    const res = await create(env, {
      ...valid,
      steps: [{ title: 'a', details: '1\n2\n3\n4\n5\n6\n7\n8' }, ...Array.from({ length: 24 }, (_, i) => ({ title: `s${i}` }))],
    });
    expect(res.status).toBe(201);
  });

  it('answers 409 listing the connected destinations when deliverTo is not one of them', async ({ env }) => {
    const none = await create(env, { ...valid, deliverTo: 'slack' });
    expect(none.status).toBe(409);
    expect(none.body).toMatchObject({ error: 'rejected', options: [] });
    const deps = { db: env.deps.db, config: env.config };
    await runAdmin(['destination', 'add', '--account', tenant.accountId, '--name', 'growth-digest'], deps);
    await runAdmin(['destination', 'add', '--account', tenant.accountId, '--name', 'ops-inbox'], deps);
    const res = await create(env, { ...valid, deliverTo: 'slack' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 'rejected',
      message: "deliverTo must be one of the account's connected destinations: growth-digest, ops-inbox",
      options: ['growth-digest', 'ops-inbox'],
    });
    const ok = await create(env, { ...valid, deliverTo: 'ops-inbox' });
    expect(ok.status).toBe(201);
    expect(ok.body.workflow.deliverTo).toBe('ops-inbox');
    const listed = await runAdmin(['destination', 'list', '--account', tenant.accountId], deps);
    expect((listed.destinations as Array<{ name: string }>).map((d) => d.name)).toEqual(['growth-digest', 'ops-inbox']);
  });

  it('needs workflows:write to write and results:read to read', async ({ env }) => {
    const reader = await env.tenant(['results:read']);
    const res = await create(env, valid, reader.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'workflows:write' });
    const writer = await env.tenant(['workflows:write']);
    const list = await env.api().get('/api/v1/workflows').set(auth(writer.token));
    expect(list.body).toEqual({ error: 'forbidden', requiredScope: 'results:read' });
  });
});

describe('changing a workflow', () => {
  it('increases version on every change, keeps step ids sent back, and re-reads a changed schedule', async ({ env }) => {
    const { workflow } = WorkflowResponse.parse((await create(env, valid)).body);
    const [first] = workflow.steps;
    const res = await patch(env, workflow.workflowId, {
      steps: [{ id: first!.id, title: 'Pull replies (renamed)' }, { title: 'New step' }],
    });
    expect(res.status).toBe(200);
    const v2 = WorkflowResponse.parse(res.body).workflow;
    expect(v2.version).toBe(2);
    expect(v2.steps[0]).toEqual({ id: first!.id, title: 'Pull replies (renamed)', details: '' });
    expect(v2.steps[1]!.id).not.toBe(workflow.steps[1]!.id);
    const v3 = WorkflowResponse.parse((await patch(env, workflow.workflowId, { scheduleText: 'every 2 hours' })).body).workflow;
    expect(v3).toMatchObject({ version: 3, scheduleEcho: 'On the hour, every 2 hours (UTC)' });
    expect((await scheduler(env, workflow.workflowId))?.pattern).toBe('0 */2 * * *');
    const same = WorkflowResponse.parse((await patch(env, workflow.workflowId, { scheduleText: 'every 2 hours' })).body).workflow;
    expect(same.version).toBe(3);
  });

  it('refuses a step id that is not one of the workflow’s, and unknown PATCH fields', async ({ env }) => {
    const { workflow } = WorkflowResponse.parse((await create(env, valid)).body);
    const foreign = await patch(env, workflow.workflowId, { steps: [{ id: 'step_nope', title: 'x' }] });
    expect(foreign.status).toBe(409);
    expect(foreign.body.message).toMatch(/steps\.0\.id step_nope is not a step of this workflow/);
    expect((await patch(env, workflow.workflowId, { version: 7 })).body).toEqual({ error: 'body has unknown field version' });
    expect((await patch(env, workflow.workflowId, { status: 'archived' })).body).toEqual({
      error: 'status must be one of "live", "paused"',
    });
  });

  it('pauses and resumes idempotently, removing and re-creating the job scheduler', async ({ env }) => {
    const { workflow } = WorkflowResponse.parse((await create(env, valid)).body);
    const id = workflow.workflowId;
    const paused = await env.api().post(`/api/v1/workflows/${id}/pause`).set(auth(tenant.token));
    expect(WorkflowResponse.parse(paused.body).workflow).toMatchObject({ status: 'paused', version: 2, nextRunAt: null });
    expect(await scheduler(env, id)).toBeUndefined();
    const again = await env.api().post(`/api/v1/workflows/${id}/pause`).set(auth(tenant.token));
    expect(again.body.workflow).toMatchObject({ status: 'paused', version: 2 });
    const resumed = WorkflowResponse.parse((await env.api().post(`/api/v1/workflows/${id}/resume`).set(auth(tenant.token))).body).workflow;
    expect(resumed).toMatchObject({ status: 'live', version: 3 });
    expect(resumed.nextRunAt).toBeGreaterThan(Date.now());
    expect((await scheduler(env, id))?.next).toBe(resumed.nextRunAt);
    const twice = await env.api().post(`/api/v1/workflows/${id}/resume`).set(auth(tenant.token));
    expect(twice.body.workflow).toMatchObject({ status: 'live', version: 3 });
    const viaPatch = await patch(env, id, { status: 'paused' });
    expect(viaPatch.body.workflow).toMatchObject({ status: 'paused', version: 4 });
  });

  it('deletes: dropped from reads, scheduler cancelled, runs route 404 after', async ({ env }) => {
    const { workflow } = WorkflowResponse.parse((await create(env, { ...valid, name: 'Short-lived' })).body);
    const id = workflow.workflowId;
    expect(RunsResponse.parse((await env.api().get(`/api/v1/workflows/${id}/runs`).set(auth(tenant.token))).body).runs).toEqual([]);
    const del = await env.api().delete(`/api/v1/workflows/${id}`).set(auth(tenant.token));
    expect(DeleteWorkflowResponse.parse(del.body)).toEqual({ ok: true, name: 'Short-lived' });
    expect(await scheduler(env, id)).toBeUndefined();
    const list = WorkflowsResponse.parse((await env.api().get('/api/v1/workflows').set(auth(tenant.token))).body);
    expect(list.workflows.map((w) => w.workflowId)).not.toContain(id);
    for (const res of [
      await env.api().get(`/api/v1/workflows/${id}/runs`).set(auth(tenant.token)),
      await patch(env, id, { name: 'x' }),
      await env.api().delete(`/api/v1/workflows/${id}`).set(auth(tenant.token)),
      await env.api().post(`/api/v1/workflows/${id}/resume`).set(auth(tenant.token)),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
    }
  });

  it("answers another account's workflow exactly like an unknown id", async ({ env }) => {
    const { workflow } = WorkflowResponse.parse((await create(env, valid)).body);
    const other = await env.tenant();
    for (const path of [`/api/v1/workflows/${workflow.workflowId}/runs`, '/api/v1/workflows/wf_unknown/runs']) {
      const res = await env.api().get(path).set(auth(other.token));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
    }
    const theirs = WorkflowsResponse.parse((await env.api().get('/api/v1/workflows').set(auth(other.token))).body);
    expect(theirs.workflows).toEqual([]);
  });

  it('validates the runs limit', async ({ env }) => {
    const { workflow } = WorkflowResponse.parse((await create(env, valid)).body);
    const res = await env.api().get(`/api/v1/workflows/${workflow.workflowId}/runs?limit=51`).set(auth(tenant.token));
    expect(res.body).toEqual({ error: 'limit must be an integer from 1 to 50' });
  });
});
