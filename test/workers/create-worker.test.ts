import { z } from 'zod';
import { describe, expect } from 'vitest';
import { configWith } from '../helpers/config.js';
import { createQueues, defineJob, enqueue, QUEUES, type QueueName } from '../../src/jobs/registry.js';
import { createWorker, defineProcessor } from '../../workers/create-worker.js';
import { parsePools, POOLS } from '../../workers/main.js';
import { it } from '../helpers/fixture.js';
import { queueWorker } from '../helpers/test-worker.js';

const echo = defineJob({
  queue: 'test-echo',
  name: 'test.echo',
  payload: z.object({ n: z.number() }),
  options: { attempts: 3, backoff: { type: 'fixed', delay: 10 } },
  description: 'doubles n',
  jobId: (p, r: { tag: string }) => `echo-${p.n}${r.tag}`,
});

describe('createWorker', () => {
  it('refuses to start when a job of its queue has no processor, or two', ({ env }) => {
    const deps = { deps: env.deps, connection: env.deps.redis };
    expect(() => createWorker('test-echo', [], [echo], deps)).toThrow(/no processor for test.echo/);
    const p = defineProcessor({ job: echo, run: async () => 1 });
    expect(() => createWorker('test-echo', [p, p], [echo], deps)).toThrow(/two processors/);
  });

  it('runs a job with its parsed payload, and fails a bad payload once without retrying', async ({ env }) => {
    let runs = 0;
    const { queues, events, close } = queueWorker(
      env,
      defineProcessor({
        job: echo,
        run: async ({ n }) => {
          runs++;
          return n * 2;
        },
      }),
    );
    try {
      await events.waitUntilReady();
      const id = await enqueue(queues, echo, { n: 21 }, { tag: '' });
      const queue = queues.get('test-echo')!;
      const job = (await queue.getJob(id))!;
      expect(await job.waitUntilFinished(events, 10_000)).toBe(42);

      await queue.add('test.echo', { n: 'not a number' }, { jobId: 'echo-bad', attempts: 3 });
      const bad = (await queue.getJob('echo-bad'))!;
      await expect(bad.waitUntilFinished(events, 10_000)).rejects.toThrow(/bad payload/);
      const settled = (await queue.getJob('echo-bad'))!;
      expect(settled.attemptsMade).toBe(1);
      expect(runs).toBe(1);
    } finally {
      await close();
    }
  });

  it('refuses a job id with a colon, which BullMQ cannot take', async ({ env }) => {
    const queues = createQueues(env.deps.redis, env.config, ['test-echo']);
    await expect(enqueue(queues, echo, { n: 1 }, { tag: 'a:b' })).rejects.toThrow(/must not contain/);
    expect(() => echo.key({ n: 1 }, { tag: 'a:b' })).toThrow(/must not contain/);
    await Promise.all([...queues.values()].map((q) => q.close()));
  });
});

describe('--pools', () => {
  it('gives each pool the concurrency of its setting', ({ env }) => {
    const deps = {
      ...env.deps,
      config: configWith({
        CARD_TIMERS_CONCURRENCY: '3',
        MAIL_SENDS_CONCURRENCY: '5',
        MAINTENANCE_CONCURRENCY: '2',
        AGENT_TURN_CONCURRENCY: '6',
        INBOUND_MAIL_CONCURRENCY: '7',
        PROVIDER_POLLS_CONCURRENCY: '9',
      }),
    };
    const concurrency = (pool: QueueName) => POOLS[pool].options(deps).concurrency;
    expect(QUEUES.map((q) => [q, concurrency(q)])).toEqual([
      ['agent-turns', 6],
      ['shipments', 5],
      ['card-timers', 3],
      ['webhook-events', deps.config.webhooks.eventsConcurrency],
      ['workflow-runs', deps.config.workflows.concurrency],
      ['maintenance', 2],
      ['inbound-mail', 7],
      ['provider-polls', 9],
    ]);
  });

  it('defaults to every pool and refuses an unknown name', () => {
    expect(parsePools(undefined)).toEqual([
      'agent-turns',
      'shipments',
      'card-timers',
      'webhook-events',
      'workflow-runs',
      'maintenance',
      'inbound-mail',
      'provider-polls',
    ]);
    expect(parsePools('agent-turns, shipments')).toEqual(['agent-turns', 'shipments']);
    // A renamed queue's former name names its pool for one release (a deployment's --pools keeps working).
    expect(parsePools('mail-sends,card-timers,shipments')).toEqual(['shipments', 'card-timers']);
    expect(() => parsePools('agent-turns,nope')).toThrow(/unknown pool nope/);
  });
});
