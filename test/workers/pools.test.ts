import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CATALOG, JOBS, QUEUES } from '../../src/jobs/catalog.js';
import { defineJob, defineQueue } from '../../src/jobs/registry.js';
import { defineSweep, retiredSweepsOf, sweepsOf } from '../../src/jobs/sweep.js';
import type { JobContext } from '../../workers/create-worker.js';
import { POOLS } from '../../workers/main.js';
import { definePool } from '../../workers/pool.js';

// A pool is its queue's handler map: `npx tsc` refuses a pool that misses a job of its queue (the
// `@ts-expect-error` lines below fail the typecheck the day the compiler stops refusing them), and
// definePool refuses it again at start, for a map the compiler could not see through.
const ping = defineJob({
  queue: 'test-pool',
  name: 'test.ping',
  payload: z.object({ n: z.number() }),
  options: { attempts: 1 },
  description: 'answers n',
  jobId: (p) => `ping-${p.n}`,
});
const pong = defineJob({
  queue: 'test-pool',
  name: 'test.pong',
  payload: z.object({ s: z.string() }),
  options: { attempts: 1 },
  description: 'answers s',
  jobId: (p) => `pong-${p.s}`,
});
const elsewhere = defineJob({ ...ping, queue: 'test-elsewhere', name: 'test.elsewhere' });
const testQueue = defineQueue('test-pool', { ping, pong });
const options = () => ({ concurrency: 1 });
const ctx = {} as JobContext;

describe('a pool module', () => {
  it('runs each job of its queue with that job’s handler, given the parsed payload', async () => {
    const pool = definePool(testQueue, { handlers: { ping: async ({ n }) => n * 2, pong: async ({ s }) => s.toUpperCase() }, options });
    expect(pool.processors.map((p) => p.job.name)).toEqual(['test.ping', 'test.pong']);
    expect(await pool.processors[0]!.run({ n: 21 }, ctx)).toBe(42);
    expect(await pool.processors[1]!.run({ s: 'ok' }, ctx)).toBe('OK');
  });

  it('does not compile without a handler for every job of its queue, and is refused at start all the same', () => {
    const handlers = { ping: async ({ n }: { n: number }) => n };
    // @ts-expect-error test.pong has no handler
    expect(() => definePool(testQueue, { handlers, options })).toThrow('pool test-pool: no handler for test.pong');
  });

  it('does not compile with a handler for a job its queue does not have, nor one reading another payload', () => {
    const ping = async ({ n }: { n: number }) => n;
    const pong = async ({ s }: { s: string }) => s;
    // @ts-expect-error `stray` is no job of test-pool
    const tooMany = () => definePool(testQueue, { handlers: { ping, pong, stray: pong }, options });
    expect(tooMany).toThrow('pool test-pool: handlers for jobs the queue does not have: stray');
    // @ts-expect-error test.ping's payload has no `s`
    const wrong = definePool(testQueue, { handlers: { ping: pong, pong }, options });
    expect(wrong.processors).toHaveLength(2);
  });

  it('does not compile a queue holding a job of another queue, and refuses it at start', () => {
    // @ts-expect-error test.elsewhere runs on test-elsewhere
    expect(() => defineQueue('test-pool', { ping, elsewhere })).toThrow('queue test-pool: test.elsewhere runs on test-elsewhere');
  });
});

describe('the pools', () => {
  it('are one per queue of the catalog, in its order, each with one processor per job of its queue', () => {
    expect(Object.keys(POOLS)).toEqual([...QUEUES]);
    for (const queue of CATALOG) {
      const pool = POOLS[queue.name];
      expect(pool.queue).toBe(queue);
      expect(pool.processors.map((p) => p.job)).toEqual(Object.values(queue.jobs));
    }
    // A job name is unique on its queue; a moved job keeps its name on the queue it left for one release.
    const names = Object.values(POOLS).flatMap((p) => p.processors.map((x) => `${x.job.queue} ${x.job.name}`));
    expect(names.sort()).toEqual(JOBS.map((j) => `${j.queue} ${j.name}`).sort());
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('a sweep', () => {
  it('is one job with an empty payload, one attempt, removed once done, keyed by its scheduler id', () => {
    const sweep = defineSweep({ queue: 'test-pool', name: 'test.sweep', description: 'd', schedulerId: 'test-sweep', everyMs: () => 5 });
    expect(sweep).toMatchObject({ queue: 'test-pool', name: 'test.sweep', options: { attempts: 1, removeOnComplete: true } });
    expect(sweep.key({})).toBe('test-sweep');
    expect(sweepsOf({ ping, sweep })).toEqual([sweep]);
  });

  it('takes its own attempts and backoff, and is still removed once done', () => {
    const retry = { attempts: 3, backoff: { type: 'fixed', delay: 10 } };
    const sweep = defineSweep({
      queue: 'test-pool',
      name: 'test.sweep',
      description: 'd',
      schedulerId: 'test-sweep',
      everyMs: () => 5,
      retry,
    });
    expect(sweep.options).toEqual({ ...retry, removeOnComplete: true });
  });

  it('keeps the scheduler ids running systems have in Redis, each on its queue; the maintenance sweeps one per area', () => {
    const sweeps = CATALOG.flatMap((q) => sweepsOf(q.jobs).map((s) => [q.name, s.name, s.key({})]));
    expect(sweeps).toEqual([
      ['shipments', 'mail.sweep', 'mail-sweep'],
      ['card-timers', 'card.sweep', 'card-sweep'],
      ['maintenance', 'maintenance.turns', 'maintenance-turns'],
      ['maintenance', 'maintenance.workflow-schedulers', 'maintenance-workflow-schedulers'],
      ['maintenance', 'maintenance.workflow-runs', 'maintenance-workflow-runs'],
      ['maintenance', 'maintenance.webhook-deliveries', 'maintenance-webhook-deliveries'],
      ['maintenance', 'maintenance.conversions', 'maintenance-conversions'],
      ['maintenance', 'maintenance.rollups', 'maintenance-rollups'],
      ['maintenance', 'maintenance.retention', 'maintenance-retention'],
      ['maintenance', 'maintenance.experiments', 'maintenance-experiments'],
      ['maintenance', 'maintenance.events', 'maintenance-events'],
      ['maintenance', 'maintenance.lead-imports', 'maintenance-lead-imports'],
      ['inbound-mail', 'inbound.sweep', 'inbound-sweep'],
      ['provider-polls', 'provider.poll-sweep', 'provider-poll-sweep'],
    ]);
    // The single sweep they replaced keeps its name (a job of it left in Redis is processed) but no schedule;
    // so does the poll sweep on the queue it left.
    const retired = CATALOG.flatMap((q) => retiredSweepsOf(q.jobs).map((s) => [q.name, s.name, s.key({})]));
    expect(retired).toEqual([
      ['maintenance', 'maintenance.sweep', 'maintenance-sweep'],
      ['inbound-mail', 'provider.poll-sweep', 'provider-poll-sweep'],
    ]);
  });
});
