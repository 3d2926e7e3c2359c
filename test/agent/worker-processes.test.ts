import { afterEach, describe, expect } from 'vitest';
import { it, type TestEnv } from '../helpers/fixture.js';
import { cancelHeard, gate, lit } from '../helpers/db-holds.js';
import { waitFor } from '../helpers/processes.js';
import { workerProcesses } from '../helpers/worker-processes.js';
import { auth } from '../helpers/auth.js';
import { turnRow, rows } from '../helpers/rows.js';

// Real worker processes (`tsx bin/start.ts workers --pools agent-turns`) sharing this file's database
// and prefix. Kills that land mid-step are in turn-resume.test.ts.
let workers: ReturnType<typeof workerProcesses>;
it.override('options', { env: { AGENT_WAIT_POLL_MS: '200' } });
it.beforeAll(({ env }) => {
  workers = workerProcesses(env);
});
afterEach(async () => {
  await workers.stopAll();
});

const send = (env: TestEnv, token: string, body: object) => env.api().post('/api/v1/agent/messages').set(auth(token)).send(body);
const turn = (env: TestEnv, id: string) => turnRow(env, id);

describe('agent-turns across worker processes', () => {
  it('runs at most one turn per account at a time with two worker processes, and both take work', async ({ env }) => {
    // One turn at a time per process, so the second process must take the other accounts' jobs.
    const slow = { AGENT_STEP_DELAY_MS: '150', AGENT_TURN_CONCURRENCY: '1' };
    await Promise.all([workers.start(slow), workers.start(slow)]);
    const tenants = await Promise.all([env.tenant(), env.tenant(), env.tenant(), env.tenant()]);
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      for (const t of tenants) sent.push((await send(env, t.token, { text: `job ${i}`, queue: true })).body.requestId);
    }
    await waitFor(
      async () => {
        const found = await rows(env, 'agent_turns').whereIn('id', sent).whereIn('status', ['replied', 'failed']);
        return found.length === sent.length;
      },
      'all turns finished',
      60_000,
    );
    const found = await rows(env, 'agent_turns').whereIn('id', sent).orderBy('started_at');
    expect(found.every((r) => r.status === 'replied')).toBe(true);
    for (const t of tenants) {
      const mine = found.filter((r) => r.account_id === t.accountId);
      expect(mine.map((r) => r.text)).toEqual(['job 0', 'job 1', 'job 2', 'job 3']);
      for (let i = 1; i < mine.length; i++) expect(Number(mine[i].started_at)).toBeGreaterThanOrEqual(Number(mine[i - 1].finished_at));
    }
    expect(new Set(found.map((r) => r.runner)).size).toBe(2);
  }, 120_000);

  it('interrupts a turn running in another process through the cancellation signal, between its steps', async ({ env }) => {
    // Ordered by events, not step lengths: the turn's first bubble waits at a gate until the later
    // message's cancel notice is out; then it may finish that step, and must stop before its second.
    await workers.start({ AGENT_STEP_DELAY_MS: '0' });
    const { token, accountId } = await env.tenant();
    // Gated at its step record, which the bubble's statement writes before it touches the turn's row
    // (the later message's statement flags that row).
    const bubbles = await gate(
      env,
      'agent_turn_steps',
      `NEW.result->>'name' = 'reply' AND EXISTS (SELECT 1 FROM agent_turns t WHERE t.id = NEW.turn_id AND t.account_id = ` +
        `${lit(accountId)})`,
    );
    try {
      const { requestId } = (await send(env, token, { text: 'a long one' })).body as { requestId: string };
      await bubbles.reached();
      const cancel = await cancelHeard(env, requestId);
      const next = send(env, token, { text: 'stop that', waitSeconds: 30 }).then((r) => r);
      await cancel.heard;
      await cancel.close();
      await bubbles.open();
      const answered = await next;
      expect(answered.status).toBe(200);
      expect(answered.body.message.status).toBe('replied');
      const stopped = await turn(env, requestId);
      expect(stopped).toMatchObject({ status: 'failed', interrupted: true });
      // It stopped between steps: its plan had two bubbles and only the one in flight was sent.
      expect(await rows(env, 'agent_replies', { turn_id: requestId })).toHaveLength(1);
    } finally {
      await bubbles.open();
    }
  }, 90_000);

  it('retries a turn whose worker was killed mid-turn; it replies in the next worker', async ({ env }) => {
    const fastStall = { AGENT_STEP_DELAY_MS: '1500', AGENT_TURN_LOCK_MS: '1000', AGENT_TURN_STALLED_INTERVAL_MS: '1000' };
    const doomed = await workers.start(fastStall);
    const { token } = await env.tenant();
    const { requestId } = (await send(env, token, { text: 'hello' })).body as { requestId: string };
    await waitFor(async () => (await turn(env, requestId)).status === 'running', 'turn running', 30_000);
    await doomed.kill();
    await workers.start({ ...fastStall, AGENT_STEP_DELAY_MS: '0' });
    await waitFor(async () => (await turn(env, requestId)).status === 'replied', 'turn replied', 60_000);
    expect((await turn(env, requestId)).attempts).toBe(2);
    // Whether the kill landed before or after the first bubble, each bubble exists once.
    expect(await rows(env, 'agent_replies', { turn_id: requestId })).toHaveLength(2);
  }, 120_000);
});
