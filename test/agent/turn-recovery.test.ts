import { agentDoors } from '../../workers/agent-turns.js';
import { describe, expect } from 'vitest';
import { recordTurn } from '../../src/agent/messages/agent.service.js';
import { FAILURES } from '../../src/agent/core/agent.types.js';
import { drainAccount, MAX_TURN_ATTEMPTS } from '../../src/agent/turns/turn-runner.js';
import { createLogger } from '../../src/logger.js';
import { buildHook, buildTurn } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

// No worker pool runs here: turns stay where the test puts them, and drainAccount is the worker's own
// entry point, called directly. A turn left `running` with nobody holding the account's lock is what a
// dead worker leaves behind.
it.override('options', { env: { AGENT_STEP_DELAY_MS: '0' } });

const log = createLogger('silent');
const status = async (env: TestEnv, token: string) => {
  const res = await env.api().get('/api/v1/agent/status').set(auth(token));
  expect(res.status).toBe(200);
  return res.body.status as { running: boolean; sandbox: string; pendingWakes: number };
};
const turnRow = (env: TestEnv, id: string) => row(env, 'agent_turns', { id });

/** A message turn left `running` by a worker that died, as its `attempts`-th claim. */
async function orphan(env: TestEnv, accountId: string, tokenId: string, attempts: number, extra: Record<string, unknown> = {}) {
  const { turn } = await env.deps.db.transaction((trx) =>
    recordTurn(trx, env.config, { accountId, kind: 'message', origin: 'api', tokenId, text: 'hello there' }),
  );
  await env.deps
    .db('agent_turns')
    .where({ id: turn.id })
    .update({ status: 'running', started_at: Date.now(), attempts, runner: 'dead-worker', ...extra });
  return turn.id;
}

describe('recovering a turn whose worker died', () => {
  it(`queues it again and it replies, up to ${MAX_TURN_ATTEMPTS} claims`, async ({ env }) => {
    const { accountId, tokenId } = await env.tenant();
    const id = await orphan(env, accountId, tokenId, MAX_TURN_ATTEMPTS - 1);
    await drainAccount(env.deps, accountId, log, agentDoors);
    expect(await turnRow(env, id)).toMatchObject({ status: 'replied', attempts: MAX_TURN_ATTEMPTS, failure: null });
  });

  it(`fails it after ${MAX_TURN_ATTEMPTS} claims, without telling the client to send it again`, async ({ env }) => {
    const { accountId, tokenId, token } = await env.tenant();
    const id = await orphan(env, accountId, tokenId, MAX_TURN_ATTEMPTS);
    await drainAccount(env.deps, accountId, log, agentDoors);
    expect(await turnRow(env, id)).toMatchObject({ status: 'failed', failure: FAILURES.workerLost, interrupted: false });
    const res = await env.api().get(`/api/v1/agent/messages/${id}`).set(auth(token));
    expect(res.body.message.failure).toBe(FAILURES.workerLost);
    expect(res.body.message.failure).not.toMatch(/send|again/i);
  });

  it('fails, without running it again, a turn whose counted steps were not recorded (orphaned across the upgrade)', async ({ env }) => {
    const { accountId, tokenId } = await env.tenant();
    const id = await orphan(env, accountId, tokenId, 1, { steps_done: 1 });
    await drainAccount(env.deps, accountId, log, agentDoors);
    expect(await turnRow(env, id)).toMatchObject({ status: 'failed', failure: FAILURES.notResumable, attempts: 2 });
    expect(await rows(env, 'agent_replies', { turn_id: id })).toEqual([]);
  });

  it('ends it as interrupted when a later message asked to interrupt it while it was orphaned; the later one runs', async ({ env }) => {
    const { accountId, tokenId } = await env.tenant();
    const id = await orphan(env, accountId, tokenId, 1);
    const { turn: later } = await env.deps.db.transaction((trx) =>
      recordTurn(trx, env.config, { accountId, kind: 'message', origin: 'api', tokenId, text: 'never mind' }),
    );
    expect((await turnRow(env, id)).interrupt_requested_at).not.toBeNull();
    await drainAccount(env.deps, accountId, log, agentDoors);
    expect(await turnRow(env, id)).toMatchObject({ status: 'failed', interrupted: true, failure: FAILURES.interrupted });
    expect(await turnRow(env, later.id)).toMatchObject({ status: 'replied' });
  });
});

describe('GET /agent/status while work waits for a worker (item 7)', () => {
  it('says running: true for a message, an event not started or not handed yet, and a turn re-queued after its worker died', async ({
    env,
  }) => {
    const a = await env.tenant();
    const sent = await env.api().post('/api/v1/agent/messages').set(auth(a.token)).send({ text: 'hello' });
    expect(sent.status).toBe(202);
    expect(await status(env, a.token)).toMatchObject({ running: true, sandbox: 'alive' });

    const b = await env.tenant();
    await env.deps.db.transaction((trx) =>
      buildTurn(trx, env.config, b.accountId, { kind: 'event', origin: 'hook', data: { label: 'signup', content: {} } }),
    );
    expect(await status(env, b.token)).toMatchObject({ running: true });

    // An event accepted at a hook URL that no worker has handed to the agent yet (no pool runs here).
    const d = await env.tenant();
    const hook = await buildHook(env.deps, d.accountId);
    expect((await env.api().post(hook.path).send({ signup: 'ada' })).status).toBe(202);
    expect(await status(env, d.token)).toMatchObject({ running: true, sandbox: 'alive' });

    // Requeued by recovery (status queued again, first start kept): started, not finished.
    const c = await env.tenant();
    const id = await orphan(env, c.accountId, c.tokenId, 1);
    await env.deps.db('agent_turns').where({ id }).update({ status: 'queued' });
    expect(await status(env, c.token)).toMatchObject({ running: true });
  });

  it('says running: false for a wake that is not due yet, and once the work is done', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    await env.deps.db.transaction((trx) =>
      buildTurn(trx, env.config, accountId, { kind: 'wake', origin: 'schedule', notBefore: Date.now() + 3_600_000 }),
    );
    expect(await status(env, token)).toMatchObject({ running: false, sandbox: 'dead', pendingWakes: 1 });
    const sent = await env.api().post('/api/v1/agent/messages').set(auth(token)).send({ text: 'hello' });
    await drainAccount(env.deps, accountId, log, agentDoors);
    expect(await turnRow(env, sent.body.requestId)).toMatchObject({ status: 'replied' });
    expect(await status(env, token)).toMatchObject({ running: false, pendingWakes: 1 });
  });
});
