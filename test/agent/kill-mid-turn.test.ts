import { hostname } from 'node:os';
import { afterEach, describe, expect } from 'vitest';
import { buildHook } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { until, waitFor } from '../helpers/processes.js';
import { QUICK_STALLS } from '../helpers/queues-idle.js';
import { workerProcesses, type WorkerChild } from '../helpers/worker-processes.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

// Real worker processes (`bin/start.ts workers --pools agent-turns,webhook-events`), killed with SIGKILL
// while they hold an account's turn, with webhook events queued behind it: the killed turn and the events
// the killed process held are taken up again by a live worker, and /agent/status says running meanwhile.
// agent-turns keeps its default lock and stall check (AGENT_TURN_LOCK_MS 5 s, AGENT_TURN_STALLED_INTERVAL_MS
// 1 s). The webhook-events jobs the killed process held wait for their pool's lock to lapse and the next stall
// check (JOBS_LOCK_MS, JOBS_STALLED_INTERVAL_MS: 30 s each by default, 15 to 60 s after a kill, which is what
// a loaded machine saw); the children run them at QUICK_STALLS (4 s, 1 s), as the other kill tests do.
let workers: ReturnType<typeof workerProcesses>;
it.override('options', { env: { WEBHOOK_HOOK_PER_HOUR: '10000', WEBHOOK_ACCOUNT_PER_HOUR: '10000' } });
it.beforeAll(({ env }) => {
  workers = workerProcesses(env);
});
afterEach(async () => {
  await workers.stopAll();
});

const KILLS = Number(process.env.KILLS ?? 3);
// Events are posted before each kill, so the work outlasts the kills however long a kill's recovery and the
// replacement worker's start take (posted all at once, a loaded machine once finished them before the last kill).
const EVENTS_PER_KILL = 10;
const EVENTS = EVENTS_PER_KILL * KILLS;
const POOLS = ['agent-turns', 'webhook-events'];
// Each turn (one reply) takes about half a second, so a running turn is there to be killed.
const CHILD = { AGENT_STEP_DELAY_MS: '250', ...QUICK_STALLS };

describe('a worker killed mid-turn', () => {
  it('has its turn and the events behind it taken up by a live worker, and /agent/status says running meanwhile', async ({ env }) => {
    const started = [await workers.start(CHILD, POOLS), await workers.start(CHILD, POOLS)];
    const byRunner = new Map<string, WorkerChild>(started.map((w) => [`${hostname()}-${w.child.pid}`, w]));
    const { accountId, token } = await env.tenant();
    const hook = await buildHook(env.deps, accountId);
    let posted = 0;
    const post = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await env.api().post(hook.path).send({ signup: posted });
        expect(res.status).toBe(202);
        posted++;
      }
    };
    const turns = () => rows(env, 'agent_turns', { account_id: accountId, kind: 'event' });
    const finished = async () => (await turns().whereIn('status', ['replied', 'failed'])).length;

    // /agent/status, read all along while accepted events are not all finished: never `running: false`.
    const notRunning: number[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        // Accepted events first, then status, then the count: a `running: false` counts only if work accepted before
        // it was still unfinished after it (read the other way round, the last turn could finish between the reads).
        const accepted = posted;
        const res = await env.api().get('/api/v1/agent/status').set(auth(token));
        const done = await finished();
        if (done < accepted && res.body.status.running !== true) notRunning.push(done);
        // The watcher's sampling pace (what is under test is every sample), not a wait for something to happen.
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const waits: number[] = [];
    try {
      for (let k = 0; k < KILLS; k++) {
        await post(EVENTS_PER_KILL);
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
          const unhanded = await rows(env, 'webhook_deliveries', { hook_id: hook.hookId, outcome: 'Accepted' }).whereNull('turn_id');
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
    // How long each took is a figure, not an assertion (a loaded machine stretches it): the bound is the wait's deadline.
    console.info(`waits after each kill (ms): ${waits.join(', ')}; median ${sorted[Math.floor(sorted.length / 2)]}, max ${sorted.at(-1)}`);
    expect(notRunning).toEqual([]);
    // Each event became one turn that replied once, the killed ones included (resumed, not repeated).
    const found = await turns();
    expect(found).toHaveLength(EVENTS);
    expect(found.every((r) => r.status === 'replied')).toBe(true);
    const replies = await rows(env, 'agent_replies')
      .whereIn(
        'turn_id',
        found.map((r) => r.id),
      )
      .select('turn_id');
    expect(replies).toHaveLength(EVENTS);
  }, 300_000);
});
