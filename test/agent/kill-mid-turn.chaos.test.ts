import { hostname } from 'node:os';
import { afterEach, describe, expect } from 'vitest';
import { buildHook } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until, waitFor } from '../helpers/processes.js';
import { workerProcesses, type WorkerChild } from '../helpers/worker-processes.js';

// Real worker processes (`bin/start.ts workers --pools agent-turns,webhook-events`) with the default lock
// and stall settings, killed with SIGKILL while they hold an account's turn, with webhook events queued
// behind it: how long the account's agent stands still, and what /agent/status says meanwhile.
let env: TestEnv;
let workers: ReturnType<typeof workerProcesses>;
it.override('options', { env: { WEBHOOK_HOOK_PER_HOUR: '10000', WEBHOOK_ACCOUNT_PER_HOUR: '10000' } });
it.beforeAll(({ env: e }) => {
  env = e;
  workers = workerProcesses(env);
});
afterEach(async () => {
  await workers.stopAll();
});

const EVENTS = 30;
const KILLS = Number(process.env.KILLS ?? 3);
const POOLS = ['agent-turns', 'webhook-events'];
// Each turn (one reply) takes about half a second, so the events outlast the kills.
const CHILD = { AGENT_STEP_DELAY_MS: '250' };

describe('a worker killed mid-turn', () => {
  it('holds up the events behind its turn for a few seconds at most, and /agent/status says running meanwhile', async () => {
    const started = [await workers.start(CHILD, POOLS), await workers.start(CHILD, POOLS)];
    const byRunner = new Map<string, WorkerChild>(started.map((w) => [`${hostname()}-${w.child.pid}`, w]));
    const { accountId, token } = await env.tenant();
    const hook = await buildHook(env.deps, accountId);
    for (let i = 0; i < EVENTS; i++) {
      const res = await env.api().post(hook.path).send({ signup: i });
      expect(res.status).toBe(202);
    }
    const turns = () => env.deps.db('agent_turns').where({ account_id: accountId, kind: 'event' });
    const finished = async () => (await turns().whereIn('status', ['replied', 'failed'])).length;

    // /agent/status, read all along while accepted events are not all finished: never `running: false`.
    const notRunning: number[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        // Status first, then the count: a `running: false` counts only if work was still unfinished after it
        // (read the other way round, the last turn could finish between the two reads).
        const res = await env.api().get('/api/v1/agent/status').set('Authorization', `Bearer ${token}`);
        const done = await finished();
        if (done < EVENTS && res.body.status.running !== true) notRunning.push(done);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const waits: number[] = [];
    try {
      for (let k = 0; k < KILLS; k++) {
        const running = await until(async () => {
          const row = await turns().where({ status: 'running' }).first();
          return row && byRunner.has(row.runner) ? row : null;
          // Bounded, and long enough for a worker process restarted after the last kill to take a turn on a loaded machine.
        }, 120_000);
        const killedAt = Date.now();
        await byRunner.get(running.runner)!.kill();
        // The wait ends when the killed turn is taken up again (claimed once more, or finished if the kill
        // came just after it) and every accepted event has been handed to the agent (some may have been
        // in the killed process's hands).
        await until(async () => {
          const killed = await turns().where({ id: running.id }).first();
          const unhanded = await env.deps
            .db('webhook_deliveries')
            .where({ hook_id: hook.hookId, outcome: 'Accepted' })
            .whereNull('turn_id');
          return (killed.attempts > running.attempts || ['replied', 'failed'].includes(killed.status)) && unhanded.length === 0;
        }, 90_000);
        waits.push(Date.now() - killedAt);
        const fresh = await workers.start(CHILD, POOLS);
        byRunner.set(`${hostname()}-${fresh.child.pid}`, fresh);
      }
      await waitFor(async () => (await finished()) === EVENTS, 'every event finished', 120_000);
    } finally {
      watching = false;
      await watcher;
    }
    const sorted = [...waits].sort((a, b) => a - b);
    console.info(`waits after each kill (ms): ${waits.join(', ')}; median ${sorted[Math.floor(sorted.length / 2)]}, max ${sorted.at(-1)}`);
    expect(Math.max(...waits)).toBeLessThan(10_000);
    expect(notRunning).toEqual([]);
    // Each event became one turn that replied once, the killed ones included (resumed, not repeated).
    const rows = await turns();
    expect(rows).toHaveLength(EVENTS);
    expect(rows.every((r) => r.status === 'replied')).toBe(true);
    const replies = await env.deps
      .db('agent_replies')
      .whereIn(
        'turn_id',
        rows.map((r) => r.id),
      )
      .select('turn_id');
    expect(replies).toHaveLength(EVENTS);
  }, 300_000);
});
