import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect } from 'vitest';
import { pendingJob } from '../../src/jobs/registry.js';
import { webhookEvent } from '../../src/jobs/webhook-events.js';
import { createLogger } from '../../src/logger.js';
import { sweepDeliveries } from '../../src/webhooks/events.service.js';
import { listDeliveries } from '../../src/webhooks/webhooks.service.js';
import { startPools } from '../../workers/main.js';
import { it } from '../helpers/fixture.js';
import { freePort, waitFor } from '../helpers/processes.js';
import { expectError, makeHook, postJson } from './helpers.js';
import { row, rows } from '../helpers/rows.js';
import { seedRows } from '../helpers/row-setup.js';

/** A private redis-server for this file: the machine's shared one is never stopped. */
function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    const until = Date.now() + 10_000;
    const probe = async () => {
      const { connect } = await import('node:net');
      const sock = connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(child);
      });
      sock.once('error', () => (Date.now() > until ? reject(new Error('redis-server did not start')) : setTimeout(probe, 50)));
    };
    void probe();
  });
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

let port: number;
let redis: ChildProcess;
// This file's own Redis, made with the options and stopped after the env is closed.
it.override('options', async ({}, { onCleanup }) => {
  port = await freePort();
  redis = await startRedis(port);
  onCleanup(() => stopRedis(redis));
  return {
    env: {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      // The load test posts more than the default hourly allowance; its sweeper runs every half second.
      WEBHOOK_HOOK_PER_HOUR: '10000',
      WEBHOOK_ACCOUNT_PER_HOUR: '10000',
      MAINTENANCE_SWEEP_MS: '500',
      MAINTENANCE_ORPHAN_AFTER_MS: '1000',
    },
  };
});

describe('queue outage (DESIGN rule 2)', () => {
  it('answers 502 with the delivery logged when Redis is down, and takes the same POST once it is back', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    expect((await postJson(env, hook.path, { before: true })).status).toBe(202);

    await stopRedis(redis);
    const down = await postJson(env, hook.path, { during: true });
    expectError(down, 502, 'the delivery was recorded but the agent could not be woken; retry the same POST');
    const [logged] = await listDeliveries(env.deps.db, hook.hookId, 1);
    expect(logged).toMatchObject({ outcome: 'Worker Error', bytes: 15, error: 'queue unreachable' });
    const delivery = await row(env, 'webhook_deliveries', { id: logged!.deliveryId });
    expect(delivery.body).toBe('{"during":true}');

    redis = await startRedis(port);
    await waitFor(async () => (await postJson(env, hook.path, { during: true })).status === 202, 'the retried POST to be accepted', 20_000);
    const [accepted] = await listDeliveries(env.deps.db, hook.hookId, 1);
    expect(accepted).toMatchObject({ outcome: 'Accepted' });
    const job = await pendingJob(env.deps.queues.get('webhook-events')!, webhookEvent.key({ deliveryId: accepted!.deliveryId }));
    expect(job?.data).toEqual({ deliveryId: accepted!.deliveryId });
  });

  it('re-queues an accepted delivery whose job never got queued (the sweeper), once', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    // As if the API died between commit and enqueue.
    await seedRows(env, 'webhook_deliveries', {
      id: 'dlv_orphan1',
      account_id: accountId,
      hook_id: hook.hookId,
      at: Date.now() - 5 * 60_000,
      outcome: 'Accepted',
      bytes: 2,
      body: '{}',
    });
    const log = createLogger('silent');
    const queue = env.deps.queues.get('webhook-events')!;
    // At least this one: on a slow run the previous test's delivery whose job the Redis restart lost
    // is old enough to be an orphan too.
    expect((await sweepDeliveries(env.deps, log)).requeued).toBeGreaterThanOrEqual(1);
    expect((await pendingJob(queue, webhookEvent.key({ deliveryId: 'dlv_orphan1' })))?.data).toEqual({ deliveryId: 'dlv_orphan1' });
    const after = (await queue.getJobCounts('waiting')).waiting;
    // A second sweep before the job runs queues nothing new (deterministic jobId).
    await sweepDeliveries(env.deps, log);
    expect((await queue.getJobCounts('waiting')).waiting).toBe(after);
  });
});

describe('Redis restarted under webhook load', () => {
  it('hands every delivery answered 202 to the agent exactly once, the jobs the restart lost through the sweeper; a 502 is ' +
    'handed on only when retried', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'load');
    const accepted: string[] = [];
    const refused: { n: number }[] = [];
    const fire = async (n: number) => {
      const res = await postJson(env, hook.path, { n });
      if (res.status === 202) accepted.push(res.body.deliveryId);
      else {
        expectError(res, 502, 'the delivery was recorded but the agent could not be woken; retry the same POST');
        refused.push({ n });
      }
    };
    const load = (from: number, count: number) => Promise.all(Array.from({ length: count }, (_, k) => fire(from + k)));

    // No worker runs yet, so every accepted delivery's job waits in Redis, which keeps nothing on disk.
    await load(0, 15);
    expect(accepted).toHaveLength(15);
    const inFlight = load(15, 15);
    await stopRedis(redis);
    await inFlight;
    await load(30, 10);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    redis = await startRedis(port);
    const queue = env.deps.queues.get('webhook-events')!;
    await waitFor(async () => (await postJson(env, hook.path, { n: 'probe' })).status === 202, 'intake to recover', 20_000);
    // The restart lost the waiting jobs: only the sweeper can hand those deliveries on now.
    expect(await pendingJob(queue, webhookEvent.key({ deliveryId: accepted[0]! }))).toBeUndefined();
    const probe = await rows(env, 'webhook_deliveries', { hook_id: hook.hookId, outcome: 'Accepted' }).whereRaw(`body = '{"n":"probe"}'`);
    accepted.push(...probe.map((r) => r.id as string));
    await load(40, 10);
    // The senders of the 502s retry the same POST, as the error tells them to.
    const retried = refused.splice(0);
    await Promise.all(retried.map(async ({ n }) => fire(n)));
    expect(refused).toEqual([]);

    const pools = await startPools(env.deps, ['webhook-events', 'agent-turns', 'maintenance']);
    try {
      await waitFor(
        async () => {
          const handedOn = await rows(env, 'webhook_deliveries').whereIn('id', accepted).whereNotNull('turn_id');
          if (handedOn.length !== accepted.length) return false;
          const done = await rows(env, 'agent_turns')
            .whereIn(
              'id',
              handedOn.map((r) => r.turn_id),
            )
            .whereIn('status', ['replied', 'failed']);
          return done.length === accepted.length;
        },
        'every accepted delivery handled',
        60_000,
      );
    } finally {
      await pools.close();
    }

    // Exactly once: one event turn per accepted delivery, none for the refused ones.
    const logged = await rows(env, 'webhook_deliveries', { hook_id: hook.hookId });
    const handed = logged.filter((r) => accepted.includes(r.id));
    expect(handed).toHaveLength(accepted.length);
    expect(handed.every((r) => r.outcome === 'Accepted' && r.turn_id)).toBe(true);
    expect(new Set(handed.map((r) => r.turn_id)).size).toBe(accepted.length);
    const others = logged.filter((r) => !accepted.includes(r.id));
    expect(others.length).toBeGreaterThanOrEqual(10);
    expect(others.every((r) => r.outcome === 'Worker Error' && r.turn_id === null)).toBe(true);
    const turns = await rows(env, 'agent_turns', { account_id: accountId, kind: 'event' });
    expect(turns).toHaveLength(accepted.length);
    expect(turns.every((t) => t.status === 'replied')).toBe(true);
    // Every payload sent reached the agent once: the 50 numbered ones and the probe.
    const payloads = handed.map((r) => JSON.parse(r.body).n).sort((a, b) => String(a).localeCompare(String(b)));
    expect(payloads).toEqual([...Array.from({ length: 50 }, (_, i) => i), 'probe'].sort((a, b) => String(a).localeCompare(String(b))));
    expect(await sweepDeliveries(env.deps, createLogger('silent'))).toEqual({ requeued: 0 });
  }, 120_000);
});

describe('the webhook-events worker giving up', () => {
  it('marks the delivery Worker Error when its last attempt fails', async ({ env }) => {
    const { webhookEventsPool } = await import('../../workers/webhook-events.js');
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    // A row no intake could write (its body is not JSON), so handing it over throws every time.
    await seedRows(env, 'webhook_deliveries', {
      id: 'dlv_broken1',
      account_id: accountId,
      hook_id: hook.hookId,
      at: Date.now(),
      outcome: 'Accepted',
      bytes: 3,
      body: '{x',
    });
    const log = createLogger('silent');
    const attempt = (attemptsMade: number) =>
      webhookEventsPool.handlers.webhookEvent(
        { deliveryId: 'dlv_broken1' },
        { deps: env.deps, log, job: { attemptsMade, opts: { attempts: 5 } } as never },
      );
    await expect(attempt(0)).rejects.toThrow();
    expect((await row(env, 'webhook_deliveries', { id: 'dlv_broken1' })).outcome).toBe('Accepted');
    await expect(attempt(4)).rejects.toThrow();
    const delivery = await row(env, 'webhook_deliveries', { id: 'dlv_broken1' });
    expect(delivery.outcome).toBe('Worker Error');
    expect(delivery.error).toMatch(/^the worker could not hand it to the agent/);
  });
});
