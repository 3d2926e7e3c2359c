import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setupTestEnv, envFor, type TestEnv } from '../helpers/env.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT, waitFor } from '../helpers/processes.js';

// Real worker processes (`tsx bin/start.ts workers --pools agent-turns`) sharing this file's database and prefix.
let env: TestEnv;
beforeAll(async () => {
  env = await setupTestEnv({ env: { AGENT_WAIT_POLL_MS: '200' } });
});
afterAll(() => env.close());

interface Child {
  child: ChildProcess;
  exited: Promise<void>;
}
const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await c.exited;
  }
});

/**
 * One worker process: node with tsx as a loader (not the tsx wrapper), so kill -9 hits the process that
 * holds the turn. Ready once its BullMQ worker is registered on the queue.
 */
async function worker(extra: Record<string, string>): Promise<Child> {
  const queue = env.rt.queues.get('agent-turns')!;
  const before = (await queue.getWorkers()).length;
  const { BASE_URL: _vite, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', 'workers', '--pools', 'agent-turns'], {
    cwd: ROOT,
    env: { ...inherited, ...envFor(env.config), ...extra },
    stdio: 'ignore',
  });
  const w = { child, exited: new Promise<void>((resolve) => child.on('exit', () => resolve())) };
  children.push(w);
  await waitFor(async () => (await queue.getWorkers()).length > before, 'worker start', 30_000);
  return w;
}

const send = (token: string, body: object) => env.api().post('/api/v1/agent/messages').set('Authorization', `Bearer ${token}`).send(body);
const turn = (id: string) => env.rt.db('agent_turns').where({ id }).first();

describe('agent-turns across worker processes', () => {
  it('runs at most one turn per account at a time with two worker processes, and both take work', async () => {
    // One turn at a time per process, so the second process must take the other accounts' jobs.
    const slow = { AGENT_STEP_DELAY_MS: '150', AGENT_TURN_CONCURRENCY: '1' };
    await Promise.all([worker(slow), worker(slow)]);
    const tenants = await Promise.all([env.tenant(), env.tenant(), env.tenant(), env.tenant()]);
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      for (const t of tenants) sent.push((await send(t.token, { text: `job ${i}`, queue: true })).body.requestId);
    }
    await waitFor(async () => {
      const rows = await env.rt.db('agent_turns').whereIn('id', sent).whereIn('status', ['replied', 'failed']);
      return rows.length === sent.length;
    }, 'all turns finished', 40_000);
    const rows = await env.rt.db('agent_turns').whereIn('id', sent).orderBy('started_at');
    expect(rows.every((r) => r.status === 'replied')).toBe(true);
    for (const t of tenants) {
      const mine = rows.filter((r) => r.account_id === t.accountId);
      expect(mine.map((r) => r.text)).toEqual(['job 0', 'job 1', 'job 2', 'job 3']);
      for (let i = 1; i < mine.length; i++) expect(Number(mine[i].started_at)).toBeGreaterThanOrEqual(Number(mine[i - 1].finished_at));
    }
    expect(new Set(rows.map((r) => r.runner)).size).toBe(2);
  }, 90_000);

  it('interrupts a turn running in another process through the cancellation signal', async () => {
    // Steps of 1.5 s keep the turn running well past the moment the interrupt arrives, even on a
    // loaded machine.
    await worker({ AGENT_STEP_DELAY_MS: '1500' });
    const { token } = await env.tenant();
    const { requestId } = (await send(token, { text: 'a long one' })).body as { requestId: string };
    await waitFor(async () => (await turn(requestId)).status === 'running', 'turn running', 15_000);
    const started = Date.now();
    const next = await send(token, { text: 'stop that', waitSeconds: 20 });
    expect(next.status).toBe(200);
    expect(next.body.message.status).toBe('replied');
    const stopped = await turn(requestId);
    expect(stopped).toMatchObject({ status: 'failed', interrupted: true });
    // Stopped between steps (a step is 1.5 s), not after the whole turn.
    expect(Number(stopped.finished_at) - started).toBeLessThan(2_500);
  }, 60_000);

  it('fails a turn cleanly after kill -9 mid-turn: stall detection hands the job to another worker', async () => {
    const fastStall = { AGENT_STEP_DELAY_MS: '800', AGENT_TURN_LOCK_MS: '1000', AGENT_TURN_STALLED_INTERVAL_MS: '1000' };
    const doomed = await worker(fastStall);
    const { token } = await env.tenant();
    const { requestId } = (await send(token, { text: 'hello' })).body as { requestId: string };
    await waitFor(async () => (await turn(requestId)).steps_done >= 1, 'first step done', 15_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect((await turn(requestId)).status).toBe('running');
    await worker(fastStall);
    await waitFor(async () => (await turn(requestId)).status === 'failed', 'turn failed', 30_000);
    const res = await env.api().get(`/api/v1/agent/messages/${requestId}`).set('Authorization', `Bearer ${token}`);
    expect(res.body.message).toMatchObject({ status: 'failed', failure: expect.stringMatching(/stopped mid-turn/), interrupted: false });
    // The account is free again: the next message runs.
    const next = await send(token, { text: 'again', waitSeconds: 20 });
    expect(next.status).toBe(200);
    expect(next.body.message.status).toBe('replied');
  }, 90_000);

  it('retries a turn whose worker was killed before its first step', async () => {
    const fastStall = { AGENT_STEP_DELAY_MS: '1500', AGENT_TURN_LOCK_MS: '1000', AGENT_TURN_STALLED_INTERVAL_MS: '1000' };
    const doomed = await worker(fastStall);
    const { token } = await env.tenant();
    const { requestId } = (await send(token, { text: 'hello' })).body as { requestId: string };
    await waitFor(async () => (await turn(requestId)).status === 'running', 'turn running', 15_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await worker({ ...fastStall, AGENT_STEP_DELAY_MS: '0' });
    await waitFor(async () => (await turn(requestId)).status === 'replied', 'turn replied', 30_000);
    expect((await turn(requestId)).attempts).toBe(2);
  }, 90_000);
});

describe('a retried turn never duplicates a card', () => {
  it('kill -9 after the turn made its card but before it recorded that step: the card exists once', async () => {
    // The window between a tool's write and the turn's step record is a few milliseconds; a trigger
    // in this file's database holds the step record of this one turn for 4 s, so the kill lands in it.
    // client_connection_check_interval lets Postgres abandon the held statement once its client is
    // gone, as it would a statement in flight when a worker dies.
    const dbName = new URL(env.config.databaseUrl).pathname.slice(1);
    await env.rt.db.raw(`ALTER DATABASE "${dbName}" SET client_connection_check_interval = '100ms'`);
    await env.rt.db.raw(`
      CREATE FUNCTION hold_step_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.steps_done > OLD.steps_done AND NEW.text LIKE 'draft an email to held@%' THEN PERFORM pg_sleep(4); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER hold_step_record BEFORE UPDATE ON agent_turns FOR EACH ROW EXECUTE FUNCTION hold_step_record();`);
    try {
      const fastStall = { AGENT_STEP_DELAY_MS: '200', AGENT_TURN_LOCK_MS: '1000', AGENT_TURN_STALLED_INTERVAL_MS: '1000' };
      const doomed = await worker(fastStall);
      const { token, accountId } = await env.tenant();
      const { requestId } = (await send(token, { text: 'draft an email to held@acme.test about pricing' })).body as { requestId: string };
      const cardsOfTurn = () => env.rt.db('review_cards').where({ account_id: accountId, turn_id: requestId });
      await waitFor(async () => (await cardsOfTurn()).length > 0, 'the draft card', 15_000);
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      await worker(fastStall);
      await waitFor(async () => ['replied', 'failed'].includes((await turn(requestId)).status), 'turn finished', 30_000);
      // The account is free again, and a later turn's drain did not run the old one a second time.
      const next = await send(token, { text: 'again', waitSeconds: 20 });
      expect(next.body.message.status).toBe('replied');
      expect(await cardsOfTurn()).toHaveLength(1);
      expect(await turn(requestId)).toMatchObject({ status: 'failed', attempts: 1 });
    } finally {
      await env.rt.db.raw('DROP TRIGGER IF EXISTS hold_step_record ON agent_turns; DROP FUNCTION IF EXISTS hold_step_record()');
      await env.rt.db.raw(`ALTER DATABASE "${dbName}" RESET client_connection_check_interval`);
    }
  }, 90_000);
});
