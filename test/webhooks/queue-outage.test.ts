import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEventJobId } from '../../src/jobs/webhook-event.job.js';
import { createLogger } from '../../src/logger.js';
import { sweepDeliveries } from '../../src/webhooks/events.service.js';
import { listDeliveries } from '../../src/webhooks/webhooks.service.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';
import { freePort, waitFor } from '../helpers/processes.js';
import { expectError, makeHook, postJson } from './helpers.js';

/** A private redis-server for this file: the machine's shared one is never stopped. */
function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
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
let env: TestEnv;
beforeAll(async () => {
  port = await freePort();
  redis = await startRedis(port);
  env = await setupTestEnv({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
});
afterAll(async () => {
  await env.close();
  await stopRedis(redis);
});

describe('queue outage (DESIGN rule 2)', () => {
  it('answers 502 with the delivery logged when Redis is down, and takes the same POST once it is back', async () => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    expect((await postJson(env, hook.path, { before: true })).status).toBe(202);

    await stopRedis(redis);
    const down = await postJson(env, hook.path, { during: true });
    expectError(down, 502, 'the delivery was recorded but the agent could not be woken; retry the same POST');
    const [logged] = await listDeliveries(env.rt.db, hook.hookId, 1);
    expect(logged).toMatchObject({ outcome: 'Worker Error', bytes: 15, error: 'queue unreachable' });
    const row = await env.rt.db('webhook_deliveries').where({ id: logged!.deliveryId }).first();
    expect(row.body).toBe('{"during":true}');

    redis = await startRedis(port);
    await waitFor(async () => (await postJson(env, hook.path, { during: true })).status === 202 , 'the retried POST to be accepted', 20_000);
    const [accepted] = await listDeliveries(env.rt.db, hook.hookId, 1);
    expect(accepted).toMatchObject({ outcome: 'Accepted' });
    const job = await env.rt.queues.get('webhook-events')!.getJob(webhookEventJobId(accepted!.deliveryId));
    expect(job?.data).toEqual({ deliveryId: accepted!.deliveryId });
  });

  it('re-queues an accepted delivery whose job never got queued (the sweeper), once', async () => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    // As if the API died between commit and enqueue.
    await env.rt.db('webhook_deliveries').insert({
      id: 'dlv_orphan1',
      account_id: accountId,
      hook_id: hook.hookId,
      at: Date.now() - 5 * 60_000,
      outcome: 'Accepted',
      bytes: 2,
      body: '{}',
    });
    const log = createLogger('silent');
    const queue = env.rt.queues.get('webhook-events')!;
    const before = await queue.getJobCounts('waiting');
    expect(await sweepDeliveries(env.rt, log)).toEqual({ requeued: 1 });
    expect((await queue.getJob(webhookEventJobId('dlv_orphan1')))?.data).toEqual({ deliveryId: 'dlv_orphan1' });
    // A second sweep before the job runs queues nothing new (deterministic jobId).
    await sweepDeliveries(env.rt, log);
    expect((await queue.getJobCounts('waiting')).waiting).toBe((before.waiting ?? 0) + 1);
  });
});

describe('the webhook-events worker giving up', () => {
  it('marks the delivery Worker Error when its last attempt fails', async () => {
    const { webhookEventProcessor } = await import('../../workers/webhook-events/webhook-event.processor.js');
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    // A row no intake could write (its body is not JSON), so handing it over throws every time.
    await env.rt.db('webhook_deliveries').insert({ id: 'dlv_broken1', account_id: accountId, hook_id: hook.hookId, at: Date.now(), outcome: 'Accepted', bytes: 3, body: '{x' });
    const log = createLogger('silent');
    const attempt = (attemptsMade: number) =>
      webhookEventProcessor.run({ deliveryId: 'dlv_broken1' }, { rt: env.rt, log, job: { attemptsMade, opts: { attempts: 5 } } as never });
    await expect(attempt(0)).rejects.toThrow();
    expect((await env.rt.db('webhook_deliveries').where({ id: 'dlv_broken1' }).first()).outcome).toBe('Accepted');
    await expect(attempt(4)).rejects.toThrow();
    const row = await env.rt.db('webhook_deliveries').where({ id: 'dlv_broken1' }).first();
    expect(row.outcome).toBe('Worker Error');
    expect(row.error).toMatch(/^the worker could not hand it to the agent/);
  });
});
