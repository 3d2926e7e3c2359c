import { afterEach, describe, expect } from 'vitest';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { workerProcesses } from '../helpers/worker-processes.js';
import { holdOnce, lit } from '../helpers/db-holds.js';
import { listDeliveries } from '../../src/webhooks/webhooks.service.js';
import { makeHook, postJson } from '../webhooks/helpers.js';
import { completion, startFakeLlm } from '../helpers/fake-llm.js';
import { auth } from '../helpers/auth.js';
import { row, rows, turnRow } from '../helpers/rows.js';

// kill -9 of a real worker process while a step's effect is written but its step record is not
// committed: the turn resumes from its last committed step in a new worker and
// replies; the step's effect exists once. A trigger in this file's database holds the chosen insert
// once (holdOnce) so the kill lands in that window; client_connection_check_interval lets Postgres
// abandon the held statement once its client is gone, as it would a statement in flight when a worker dies.
let workers: ReturnType<typeof workerProcesses>;
let dbName: string;
it.override('options', { env: { AGENT_WAIT_POLL_MS: '200', WEBHOOK_HOOK_PER_HOUR: '10000', WEBHOOK_ACCOUNT_PER_HOUR: '10000' } });
it.beforeAll(async ({ env }) => {
  workers = workerProcesses(env);
  dbName = new URL(env.config.databaseUrl).pathname.slice(1);
  await env.deps.db.raw(`ALTER DATABASE "${dbName}" SET client_connection_check_interval = '100ms'`);
});
afterEach(async () => {
  await workers.stopAll();
});
it.afterAll(async ({ env }) => {
  await env.deps.db.raw(`ALTER DATABASE "${dbName}" RESET client_connection_check_interval`);
});

// Stalled jobs of a killed worker are handed on within about a second; no delay between steps.
const FAST_STALL = { AGENT_STEP_DELAY_MS: '0', AGENT_TURN_LOCK_MS: '1000', AGENT_TURN_STALLED_INTERVAL_MS: '1000' };
const BOTH_POOLS = ['agent-turns', 'webhook-events'];

const finished = (env: TestEnv, id: string) =>
  waitFor(async () => ['replied', 'failed'].includes((await turnRow(env, id)).status), `turn ${id} finished`, 60_000);
const send = (env: TestEnv, token: string, body: object) => env.api().post('/api/v1/agent/messages').set(auth(token)).send(body);

async function statusRunning(env: TestEnv, token: string): Promise<boolean> {
  const res = await env.api().get('/api/v1/agent/status').set(auth(token));
  expect(res.status).toBe(200);
  return res.body.status.running as boolean;
}

describe('a turn whose worker is killed mid-step resumes from its last committed step', () => {
  async function draftAfterKill(env: TestEnv, hold: (accountId: string) => Promise<{ reached(): Promise<void> }>) {
    const { token, accountId } = await env.tenant();
    const held = await hold(accountId);
    const doomed = await workers.start(FAST_STALL);
    const { requestId } = (await send(env, token, { text: 'draft an email to held@acme.test about pricing' })).body as {
      requestId: string;
    };
    await held.reached();
    await doomed.kill();
    // Nothing runs it now, but the work is not done: a polling client must not read "done" (item 7).
    expect(await statusRunning(env, token)).toBe(true);
    await workers.start(FAST_STALL);
    await finished(env, requestId);
    const res = await env.api().get(`/api/v1/agent/messages/${requestId}`).set(auth(token));
    expect(res.body.message).toMatchObject({ status: 'replied', interrupted: false });
    expect(res.body.message.failure).toBeUndefined();
    expect(res.body.message.replies).toEqual([
      { text: expect.stringMatching(/^I drafted an email to held@acme\.test about pricing/), at: expect.any(Number) },
    ]);
    expect(await rows(env, 'review_cards', { account_id: accountId, turn_id: requestId })).toHaveLength(1);
    expect(await turnRow(env, requestId)).toMatchObject({ status: 'replied', attempts: 2, steps_done: 2 });
    expect(await statusRunning(env, token)).toBe(false);
  }

  it('a message: killed while its draft card is written (before the step commits) → replied, one draft', async ({ env }) => {
    await draftAfterKill(env, (accountId) => holdOnce(env, 'review_cards', 'AFTER', `NEW.account_id = ${lit(accountId)}`));
  }, 180_000);

  it("a message: killed while the draft's step record is written, after its card → replied, one draft", async ({ env }) => {
    await draftAfterKill(env, (accountId) =>
      holdOnce(
        env,
        'agent_turn_steps',
        'BEFORE',
        `NEW.result->>'name' = 'ship' AND EXISTS (SELECT 1 FROM agent_turns WHERE id = NEW.turn_id AND account_id = ${lit(accountId)})`,
      ),
    );
  }, 180_000);

  it('a plain message: killed while its second bubble is written → resumes with that bubble only; each bubble once', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const held = await holdOnce(
      env,
      'agent_replies',
      'AFTER',
      `NEW.account_id = ${lit(accountId)} AND EXISTS (SELECT 1 FROM agent_replies r WHERE r.turn_id = NEW.turn_id AND r.id <> NEW.id)`,
    );
    const doomed = await workers.start(FAST_STALL);
    const { requestId } = (await send(env, token, { text: 'hello there' })).body as { requestId: string };
    await held.reached();
    await doomed.kill();
    expect(await turnRow(env, requestId)).toMatchObject({ status: 'running', steps_done: 1 });
    await workers.start(FAST_STALL);
    await finished(env, requestId);
    expect(await turnRow(env, requestId)).toMatchObject({ status: 'replied', attempts: 2, steps_done: 2 });
    const bubbles = await rows(env, 'agent_replies', { turn_id: requestId }).orderBy('id');
    expect(bubbles.map((b) => b.text)).toEqual([
      expect.stringMatching(/^Got it: "hello there"/),
      expect.stringMatching(/^I am running offline/),
    ]);
    // The account is free again: the next message runs.
    const next = await send(env, token, { text: 'again', waitSeconds: 30 });
    expect(next.body.message.status).toBe('replied');
  }, 180_000);

  it("a webhook event: killed while its second step's draft is written → replied; " +
    'the lead, the draft and the note exist once', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'signup');
    // The event's plan is lead (committed), then the draft (held), then a note.
    const held = await holdOnce(env, 'review_cards', 'AFTER', `NEW.account_id = ${lit(accountId)}`);
    const doomed = await workers.start(FAST_STALL, BOTH_POOLS);
    const res = await postJson(env, hook.path, { email: 'ann@held-corp.test', name: 'Ann', company: 'Held Corp' });
    expect(res.status).toBe(202);
    await held.reached();
    await doomed.kill();
    expect(await statusRunning(env, token)).toBe(true);
    await workers.start(FAST_STALL, BOTH_POOLS);
    const delivery = await row(env, 'webhook_deliveries', { id: res.body.deliveryId });
    expect(delivery.turn_id).toEqual(expect.any(String));
    await finished(env, delivery.turn_id);
    expect(await turnRow(env, delivery.turn_id)).toMatchObject({ status: 'replied', failure: null, attempts: 2, steps_done: 3 });
    const leads = await rows(env, 'leads', { account_id: accountId });
    expect(leads.map((l) => l.domain)).toEqual(['held-corp.test']);
    expect(await rows(env, 'lead_research', { lead_id: leads[0].id })).toHaveLength(1);
    expect(await rows(env, 'review_cards', { account_id: accountId, turn_id: delivery.turn_id })).toMatchObject([
      { source_type: 'mail_draft' },
    ]);
    expect(await rows(env, 'agent_replies', { turn_id: delivery.turn_id })).toHaveLength(1);
    const steps = await rows(env, 'agent_turn_steps', { turn_id: delivery.turn_id }).orderBy('idx');
    expect(steps.map((s) => s.result.name)).toEqual(['upsert_lead', 'ship', 'reply']);
    // The delivery log names the lead the first attempt made: the resumed turn keeps its first start.
    const [logged] = await listDeliveries(env.deps.db, hook.hookId, 10);
    expect(logged).toMatchObject({
      outcome: 'Accepted',
      agent: { made: 'card', turn: 'replied', lead: { domain: 'held-corp.test' }, card: { sourceType: 'mail_draft' } },
    });
  }, 180_000);

  it('the llm brain: the resumed turn replays the recorded round, runs only its unrecorded call, and asks the model only for ' +
    'the next round', async ({ env }) => {
    const llm = await startFakeLlm();
    try {
      const llmEnv = { ...FAST_STALL, AGENT_BRAIN: 'llm', LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test', LLM_MODEL: 'test-model' };
      llm.script(
        () => ({
          body: completion(null, [
            { id: 'c_lead', name: 'upsert_lead', args: { domain: 'llm-held.test' } },
            { id: 'c_ship', name: 'ship', args: { work: 'email', title: 'Intro', to: 'bo@llm-held.test', subject: 'Hi', body: 'Hello' } },
          ]),
        }),
        () => ({ body: completion('Recorded the lead and drafted an intro; it waits in your review queue.') }),
      );
      const { token, accountId } = await env.tenant();
      const held = await holdOnce(env, 'review_cards', 'AFTER', `NEW.account_id = ${lit(accountId)}`);
      const doomed = await workers.start(llmEnv);
      const { requestId } = (await send(env, token, { text: 'find me a lead and draft an intro' })).body as { requestId: string };
      await held.reached();
      await doomed.kill();
      await workers.start(llmEnv);
      await finished(env, requestId);
      expect(await turnRow(env, requestId)).toMatchObject({ status: 'replied', attempts: 2, steps_done: 3 });
      expect(await rows(env, 'review_cards', { account_id: accountId, turn_id: requestId })).toHaveLength(1);
      expect((await rows(env, 'leads', { account_id: accountId })).map((l) => l.domain)).toEqual(['llm-held.test']);
      // Round 0 was asked once (by the killed worker); the next worker asked only for round 1, with both
      // calls and both results in the transcript.
      expect(llm.requests).toHaveLength(2);
      const resumed = llm.requests[1]!.body.messages;
      expect(resumed.filter((m) => m.role === 'assistant' && m.tool_calls?.length)).toHaveLength(1);
      expect(resumed.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['c_lead', 'c_ship']);
      const res = await env.api().get(`/api/v1/agent/messages/${requestId}`).set(auth(token));
      expect(res.body.message.replies.map((r: { text: string }) => r.text)).toEqual([
        'Recorded the lead and drafted an intro; it waits in your review queue.',
      ]);
    } finally {
      await llm.close();
    }
  }, 180_000);
});
