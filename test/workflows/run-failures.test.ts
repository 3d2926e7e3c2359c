import { describe, expect } from 'vitest';
import { RunsResponse, WorkflowResponse } from '../../api/routes/workflows.schemas.js';
import { startTurn } from '../helpers/agent.js';
import { newId } from '../../src/ids.js';
import { enqueue } from '../../src/jobs/registry.js';
import { workflowAdvance, workflowRun } from '../../src/jobs/workflow-runs.js';
import { repairRuns } from '../../src/workflows/run-repair.js';
import { runsRepository } from '../../src/workflows/runs.repository.js';
import { advanceRun, fireRun } from '../../src/workflows/runs.service.js';
import { POOLS, startPools } from '../../workers/main.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { completion, type FakeLlm, type ChatRequest } from '../helpers/fake-llm.js';
import { waitFor } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

/**
 * Workflow runs whose steps fail, time out, or are stopped, with the llm brain talking to a local fake
 * model. Each workflow has its own name; the fake model answers by the name in the turn's input: 500
 * for the names in `failing`, held until the test opens the hold for the names in `holds`, else a reply.
 */
const failing = new Set<string>();
const holds = new Map<string, { open(): void; opened: Promise<void> }>();

function hold(name: string): () => void {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  holds.set(name, { open, opened });
  return open;
}

const workflowIn = (req: ChatRequest) =>
  /Workflow "([^"]+)"/.exec(req.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')?.[1];
const asked = (llm: FakeLlm, name: string) => llm.requests.filter((r) => workflowIn(r) === name).length;

it.override('options', ({ llm }) => ({
  env: {
    AGENT_BRAIN: 'llm',
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: 'sk-test',
    // A held answer is released by the test, never cut off by the client's own time limit.
    LLM_TIMEOUT_MS: '120000',
    LLM_MAX_RETRIES: '1',
    LLM_BACKOFF_MS: '20',
    WORKFLOW_POLL_MS: '50',
    // One run at a time: only the hand-back after a short slice lets a second account's run move.
    WORKFLOW_RUNS_CONCURRENCY: '1',
    WORKFLOW_RUN_SLICE_MS: '300',
    WORKFLOW_RUN_YIELD_DELAY_MS: '50',
  },
}));
it.beforeAll(async ({ env, llm, pools }) => {
  llm.script(async (req) => {
    const name = workflowIn(req);
    if (name && failing.has(name)) return { status: 500, body: { error: 'the model is down' } };
    const held = name ? holds.get(name) : undefined;
    if (held) await held.opened;
    return { body: completion(`${name ?? 'That'} is done.`) };
  });
  // Started here, not through the fixture's options: a test restarts them.
  pools = await startPools(env.deps, ['agent-turns', 'workflow-runs']);
});
it.afterAll(async ({ pools }) => {
  for (const h of holds.values()) h.open();
  await pools?.close();
});

async function workflow(env: TestEnv, name: string, steps: string[]) {
  const t = await env.tenant();
  const res = await env
    .api()
    .post('/api/v1/workflows')
    .set(auth(t.token))
    .send({ name, scheduleText: 'weekly', steps: steps.map((title) => ({ title })) });
  expect(res.status).toBe(201);
  return { ...t, workflowId: WorkflowResponse.parse(res.body).workflow.workflowId };
}

/** What the job scheduler does when the workflow is due: one `workflow.run` job. */
const fire = (env: TestEnv, workflowId: string) => enqueue(env.deps.queues, workflowRun, { workflowId });

const runOf = async (env: TestEnv, workflowId: string) => {
  const row = await rows(env, 'workflow_runs', { workflow_id: workflowId }).first<{ id: string } | undefined>('id');
  return row ? runsRepository(env.deps.db).load(row.id) : null;
};
const outcomes = (run: { steps: Array<{ outcome: string; reason?: string }> } | null) =>
  run?.steps.map((s) => [s.outcome, s.reason ?? null]);
const turnsOf = (env: TestEnv, accountId: string) =>
  rows(env, 'agent_turns', { account_id: accountId, kind: 'workflow_run' }).select('id', 'status');

// Waits are bounded by their own deadlines; the test's limit only has to be longer than those.
describe('a workflow run', { timeout: 180_000 }, () => {
  it('ends failed when its step fails, without picking the failed step again', async ({ env, llm }) => {
    failing.add('Broken');
    const w = await workflow(env, 'Broken', ['look at the pipeline', 'write the summary']);
    await fire(env, w.workflowId);
    await waitFor(async () => (await runOf(env, w.workflowId))?.status === 'failed', 'the run to fail', 60_000);
    const run = (await runOf(env, w.workflowId))!;
    expect(outcomes(run)).toEqual([
      ['failed', expect.stringMatching(/language model answered HTTP 500/)],
      ['skipped', 'an earlier step failed'],
    ]);
    expect(run.summary).toMatch(/^Broken run failed\./);
    // Claimed once, failed once: two saves after the insert, one turn, and the model asked once per try.
    expect(run.revision).toBe(2);
    expect(await turnsOf(env, w.accountId)).toEqual([{ id: expect.any(String), status: 'failed' }]);
    expect(asked(llm, 'Broken')).toBe(2);
  });

  it('ends failed when its step runs past the step time limit, and stays failed when the turn answers late', async ({ env }) => {
    const release = hold('Slow step');
    const w = await workflow(env, 'Slow step', ['think hard', 'report']);
    const opts = { ...env.config.workflows, stepTimeoutMs: 2_000, jobSliceMs: 120_000 };
    const firing = fireRun(env.deps, w.workflowId, newId('firing'), Date.now(), opts);
    await waitFor(async () => (await runOf(env, w.workflowId))?.steps[0]?.outcome === 'failed', 'the step to time out', 60_000);
    release();
    const ended = (await firing)!;
    expect(ended.status).toBe('failed');
    expect(ended.steps.map((s) => [s.outcome, s.reason])).toEqual([
      ['failed', 'the agent did not finish this step within 2 s'],
      ['skipped', 'an earlier step failed'],
    ]);
    // The held turn does answer in the end; the run it belonged to has already ended.
    await waitFor(async () => (await turnsOf(env, w.accountId))[0]?.status === 'replied', 'the late turn to reply', 60_000);
    expect((await advanceRun(env.deps, ended.runId, opts))!.status).toBe('failed');
    expect(outcomes(await runOf(env, w.workflowId))).toEqual([
      ['failed', 'the agent did not finish this step within 2 s'],
      ['skipped', 'an earlier step failed'],
    ]);
  });

  it("does not keep another account's run from finishing while its own step is still running", async ({ env, llm }) => {
    expect(POOLS['workflow-runs'].options(env.deps)).toMatchObject({ concurrency: 1 });
    const release = hold('Long A');
    const a = await workflow(env, 'Long A', ['a long step']);
    const b = await workflow(env, 'Quick B', ['a short step']);
    await fire(env, a.workflowId);
    await waitFor(async () => asked(llm, 'Long A') === 1, "A's step to reach the model", 60_000);
    await fire(env, b.workflowId);
    await waitFor(async () => (await runOf(env, b.workflowId))?.status === 'done', "B's run to finish", 60_000);
    // A's step is still held at the model: B finished beside it, not after it.
    expect(await runOf(env, a.workflowId)).toMatchObject({ status: 'running', steps: [{ outcome: 'running' }] });
    release();
    await waitFor(async () => (await runOf(env, a.workflowId))?.status === 'done', "A's run to finish once its step answers", 60_000);
  });

  it('ends cancelled when its workflow is paused, and the runner does not take it up again', async ({ env, llm }) => {
    const release = hold('Paused mid-run');
    const w = await workflow(env, 'Paused mid-run', ['first', 'second']);
    await fire(env, w.workflowId);
    await waitFor(async () => asked(llm, 'Paused mid-run') === 1, 'the first step to reach the model', 60_000);
    const paused = await env.api().post(`/api/v1/workflows/${w.workflowId}/pause`).set(auth(w.token));
    expect(paused.status).toBe(200);
    const [run] = RunsResponse.parse((await env.api().get(`/api/v1/workflows/${w.workflowId}/runs`).set(auth(w.token))).body).runs;
    expect(run).toMatchObject({ status: 'cancelled', finishedAt: expect.any(Number) });
    expect(run!.steps.map((s) => [s.outcome, s.reason])).toEqual([
      ['skipped', 'the workflow was paused while this step ran'],
      ['skipped', 'the workflow was paused'],
    ]);
    release();
    await waitFor(async () => (await turnsOf(env, w.accountId))[0]?.status === 'replied', 'the running turn to finish', 60_000);
    const queue = env.deps.queues.get('workflow-runs')!;
    const mine = async () =>
      (await queue.getJobs(['active', 'waiting', 'delayed'])).filter(
        (j) => j.data.workflowId === w.workflowId || j.data.runId === run!.runId,
      );
    await waitFor(async () => (await mine()).length === 0, "the run's jobs to end", 60_000);
    expect(await runOf(env, w.workflowId)).toMatchObject({ status: 'cancelled' });
    expect(await turnsOf(env, w.accountId)).toHaveLength(1);
  });

  it('ends cancelled when its workflow is deleted', async ({ env, llm }) => {
    const release = hold('Deleted mid-run');
    const w = await workflow(env, 'Deleted mid-run', ['only step']);
    await fire(env, w.workflowId);
    await waitFor(async () => asked(llm, 'Deleted mid-run') === 1, 'the step to reach the model', 60_000);
    const deleted = await env.api().delete(`/api/v1/workflows/${w.workflowId}`).set(auth(w.token));
    expect(deleted.status).toBe(200);
    expect(outcomes(await runOf(env, w.workflowId))).toEqual([['skipped', 'the workflow was deleted while this step ran']]);
    expect(await runOf(env, w.workflowId)).toMatchObject({ status: 'cancelled' });
    release();
  });

  it('left running with a failed step before a restart, ends failed once a fresh worker takes it up', async ({ env, pools }) => {
    failing.add('Restarted');
    const w = await workflow(env, 'Restarted', ['one', 'two']);
    // What a worker of the looping version left behind: the step's turn failed, the run still running.
    const { turn } = await startTurn(env.deps, {
      accountId: w.accountId,
      kind: 'workflow_run',
      origin: 'workflow',
      text: 'Workflow "Restarted", step 1 of 2: one',
      mode: 'queue',
    });
    await waitFor(async () => (await turnsOf(env, w.accountId))[0]?.status === 'failed', 'the turn to fail', 60_000);
    const left = await runsRepository(env.deps.db).ensure(
      {
        id: newId('run'),
        workflowId: w.workflowId,
        accountId: w.accountId,
        status: 'running',
        workflowVersion: 1,
        scheduledFor: Date.now(),
        startedAt: Date.now(),
        steps: [
          {
            stepId: 's1',
            title: 'one',
            details: '',
            outcome: 'failed',
            reason: 'the language model is down',
            turnId: turn.id,
            at: Date.now(),
          },
          { stepId: 's2', title: 'two', details: '', outcome: 'skipped', reason: 'an earlier step failed', at: Date.now() },
        ],
      },
      newId('firing'),
    );
    await pools.close();
    pools = await startPools(env.deps, ['agent-turns', 'workflow-runs']);
    // The redelivered job of that firing: a fresh worker advances the run it finds.
    await enqueue(env.deps.queues, workflowAdvance, { runId: left.id }, { why: 'handover' });
    await waitFor(async () => (await runOf(env, w.workflowId))?.status === 'failed', 'the run to end failed', 60_000);
    const run = (await runOf(env, w.workflowId))!;
    expect(run.revision).toBe(1);
    expect(outcomes(run)).toEqual([
      ['failed', 'the language model is down'],
      ['skipped', 'an earlier step failed'],
    ]);
    expect(await turnsOf(env, w.accountId)).toHaveLength(1);
  });

  it('left running with no job to move it (its job failed for good), is taken up again by the maintenance sweep', async ({ env }) => {
    const w = await workflow(env, 'Orphaned', ['only step']);
    const left = await runsRepository(env.deps.db).ensure(
      {
        id: newId('run'),
        workflowId: w.workflowId,
        accountId: w.accountId,
        status: 'running',
        workflowVersion: 1,
        scheduledFor: Date.now(),
        startedAt: Date.now(),
        steps: [{ stepId: 's1', title: 'only step', details: '', outcome: 'pending' }],
      },
      newId('lost'),
    );
    expect(await repairRuns(env.deps)).toBe(1);
    await waitFor(async () => (await runOf(env, w.workflowId))?.status === 'done', 'the repaired run to finish', 60_000);
    expect(outcomes(await runsRepository(env.deps.db).load(left.id))).toEqual([['done', null]]);
    // Every run of this file has ended or has its job now: nothing left to repair.
    expect(await repairRuns(env.deps)).toBe(0);
  });
});
