import { QueueEvents } from 'bullmq';
import { z } from 'zod';
import { afterAll, describe, expect } from 'vitest';
import { requestDrain } from '../../src/agent/core/drain.js';
import { agentTurn } from '../../src/jobs/agent-turns.js';
import { createLogger } from '../../src/logger.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { handDeliveries } from '../../src/webhooks/events.service.js';
import { createQueues, defineJob, enqueue, pendingJob, type QueueSet } from '../../src/jobs/registry.js';
import { createRedis, type Redis } from '../../src/redis.js';
import { createWorker, defineProcessor } from '../../workers/create-worker.js';
import { waitFor } from '../helpers/processes.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { makeHook, postJson } from '../webhooks/helpers.js';
import { auth } from '../helpers/auth.js';
import { row } from '../helpers/rows.js';

// Finished jobs stay in Redis (JOBS_KEEP_*) so the board shows history, and keeping them must never
// turn a later enqueue under the same deterministic key into a silent no-op.

it.override('options', { env: { ADMIN_USER: 'ops', ADMIN_PASSWORD: 'correct horse' }, pools: ['agent-turns', 'card-timers'] });

const basic = `Basic ${Buffer.from('ops:correct horse').toString('base64')}`;
const turns = (env: TestEnv) => env.deps.queues.get('agent-turns')!;
const completedFor = async (env: TestEnv, accountId: string) =>
  (await turns(env).getCompleted(0, -1)).filter((j) => j.data.accountId === accountId);

describe('finished jobs are kept', () => {
  it('lists a completed drain on the board after it ran', async ({ env }) => {
    const { accountId } = await env.tenant();
    await requestDrain(env.deps, accountId, { why: 'turn', turnId: `keep-${accountId}` });
    await waitFor(async () => (await completedFor(env, accountId)).length === 1, 'the drain to complete', 20_000);

    const res = await env
      .api()
      .get('/admin/queues/api/queues')
      .query({ activeQueue: 'agent-turns', status: 'completed', page: 1, jobsPerPage: 50 })
      .set('Authorization', basic);
    expect(res.status).toBe(200);
    const board = (res.body.queues as Array<{ name: string; jobs: Array<{ name: string; data: { accountId?: string } }> }>).find(
      (q) => q.name === 'agent-turns',
    )!;
    expect(board.jobs.filter((j) => j.data.accountId === accountId)).toEqual([expect.objectContaining({ name: 'agent.turn' })]);
  });

  it('runs a drain requested twice under one key: once while the first waits, again after it completed', async ({ env }) => {
    const { accountId } = await env.tenant();
    const reason = { why: 'turn', turnId: `twice-${accountId}` } as const;
    const key = agentTurn.key({ accountId }, reason);
    await requestDrain(env.deps, accountId, reason, 60_000);
    await requestDrain(env.deps, accountId, reason, 60_000);
    const delayed = (await turns(env).getDelayed(0, -1)).filter((j) => j.data.accountId === accountId);
    expect(delayed).toHaveLength(1);
    await delayed[0]!.promote();
    await waitFor(async () => (await completedFor(env, accountId)).length === 1, 'the first drain to complete', 20_000);
    expect(await pendingJob(turns(env), key)).toBeUndefined();

    // The handed-again path (events.service) asks for the same drain after the first one finished.
    await requestDrain(env.deps, accountId, reason);
    await waitFor(async () => (await completedFor(env, accountId)).length === 2, 'the second drain to run as well', 20_000);
  });

  it('queues the drain again when a handed webhook delivery is handed a second time after its drain completed', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const posted = await postJson(env, hook.path, { signup: 'ada@example.com' });
    expect(posted.status).toBe(202);
    const log = createLogger('silent');
    expect((await handDeliveries(env.deps, [posted.body.deliveryId], log)).get(posted.body.deliveryId)).toBe('handed');
    const { turn_id: turnId } = await row(env, 'webhook_deliveries', { id: posted.body.deliveryId });
    const drains = async () =>
      (await completedFor(env, accountId)).filter((j) => j.id!.startsWith(`${agentTurn.key({ accountId }, { why: 'turn', turnId })}-`))
        .length;
    await waitFor(async () => (await drains()) === 1, 'the drain of the delivery to complete', 30_000);

    // A retried webhook job finds the delivery handed and asks for `turn-<turnId>` again.
    expect((await handDeliveries(env.deps, [posted.body.deliveryId], log)).get(posted.body.deliveryId)).toBe('already handed');
    await waitFor(async () => (await drains()) === 2, 'the drain asked for again to run', 30_000);
  });

  it('wakes a card snoozed twice, and keeps both wake jobs', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'question');
    const timers = env.deps.queues.get('card-timers')!;
    for (const round of [1, 2]) {
      const res = await env
        .api()
        .post(`/api/v1/review/${card.id}/snooze`)
        .set(auth(token))
        // Far enough ahead that the request, on a loaded machine, still finds `until` in the future.
        .send({ until: Date.now() + 1_500 });
      expect(res.status).toBe(200);
      await waitFor(
        async () => (await cardsRepository(env.deps.db).find(accountId, card.id))?.status === 'pending',
        `wake ${round}`,
        20_000,
      );
    }
    // The card is pending once the wake's statement committed; BullMQ marks the job completed just after
    // its processor returns, so the second may still be finishing here (seen under load): wait for it.
    const wakes = async () => (await timers.getCompleted(0, -1)).filter((j) => j.name === 'card.wake' && j.data.cardId === card.id);
    await waitFor(async () => (await wakes()).length >= 2, 'both wake jobs to be kept as completed', 20_000);
    expect(await wakes()).toHaveLength(2);
  });
});

describe('a key after its job finally failed', () => {
  let queues: QueueSet;
  let connection: Redis;
  let events: QueueEvents;
  const attempts = new Map<number, number>();
  const flaky = defineJob({
    queue: 'test-flaky',
    name: 'test.flaky',
    payload: z.object({ n: z.number() }),
    options: { attempts: 2, backoff: { type: 'fixed', delay: 10 } },
    description: 'fails the first two tries of n, succeeds after',
    jobId: (p) => `send-${p.n}`,
  });
  it.beforeAll(async ({ env }) => {
    queues = createQueues(env.deps.redis, env.config, ['test-flaky']);
    connection = createRedis(env.config, 'worker');
    // From the stream's start, not '$' (test/workers/create-worker.test.ts says why, on a cluster).
    events = new QueueEvents('test-flaky', {
      connection: createRedis(env.config, 'worker'),
      prefix: env.config.queuePrefix,
      lastEventId: '0-0',
    });
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await events.close();
    await Promise.all([...queues.values()].map((q) => q.close()));
    connection.disconnect();
  });

  it('keeps the failed job and runs a retry enqueued under the same key (a send retried)', async ({ env }) => {
    const worker = createWorker(
      'test-flaky',
      [
        defineProcessor({
          job: flaky,
          run: async ({ n }) => {
            const seen = (attempts.get(n) ?? 0) + 1;
            attempts.set(n, seen);
            if (seen <= 2) throw new Error(`try ${seen} fails`);
            return 'ok';
          },
        }),
      ],
      [flaky],
      { deps: env.deps, connection },
    );
    try {
      const queue = queues.get('test-flaky')!;
      const first = (await queue.getJob(await enqueue(queues, flaky, { n: 1 })))!;
      await expect(first.waitUntilFinished(events, 20_000)).rejects.toThrow(/try 2 fails/);
      expect((await queue.getFailed(0, -1)).map((j) => j.id)).toContain(first.id);

      const again = (await queue.getJob(await enqueue(queues, flaky, { n: 1 })))!;
      expect(again.id).not.toBe(first.id);
      expect(await again.waitUntilFinished(events, 20_000)).toBe('ok');
      expect((await queue.getFailed(0, -1)).map((j) => j.id)).toContain(first.id);
    } finally {
      await worker.close();
    }
  });
});
