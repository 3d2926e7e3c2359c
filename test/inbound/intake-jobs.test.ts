import { describe, expect } from 'vitest';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import {
  MAX_COUNTED_TRIES,
  MAX_PARSE_TRIES,
  processWithinTries,
  STALE_AFTER_MS,
  storeInbound,
  sweepInbound,
} from '../../src/inbound/intake.service.js';
import { inboundParse, inboundSweep } from '../../src/jobs/inbound-mail.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { startPools } from '../../workers/main.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rawMessage } from '../helpers/smtp-client.js';
import { backdate } from '../helpers/row-setup.js';

// What keeps a stored message moving: the sweep hands back what was left `received`, and a message
// whose processing keeps failing ends `malformed` after a bounded number of tries.

const queue = (env: TestEnv) => env.deps.queues.get('inbound-mail')!;
let account: Promise<string> | undefined;
/** A message stored under one account of this file (made on first use). */
const store = async (env: TestEnv) => {
  account ??= env.tenant().then((t) => t.accountId);
  return storeInbound(env.deps, { accountId: await account, via: 'smtp', mailFrom: null, rcptTo: ['x@localhost'], raw: rawMessage() });
};
const poison = async () => {
  throw new Error('mailparser choked on part 3');
};

describe('the inbound sweep', () => {
  it('re-enqueues messages still received after a minute, not newer ones nor settled ones', async ({ env }) => {
    const stale = await store(env);
    const settled = await store(env);
    const fresh = await store(env);
    const repo = inboundRepository(env.deps.db);
    await repo.settle(settled, { status: 'unplaced', reason: 'no send matches' }, Date.now());
    const at = Date.now();
    await backdate(env, 'inbound_messages', { id: [stale, settled] }, { received_at: at - STALE_AFTER_MS - 1_000 });
    // Nothing queued them: as after a lost enqueue or a crash between the 250 and the enqueue.
    expect(await pendingJob(queue(env), inboundParse.key({ id: stale }))).toBeUndefined();

    const swept = await sweepInbound(env.deps, at);
    expect(swept.requeued).toBeGreaterThanOrEqual(1);
    expect((await pendingJob(queue(env), inboundParse.key({ id: stale })))?.data).toEqual({ id: stale });
    expect(await pendingJob(queue(env), inboundParse.key({ id: settled }))).toBeUndefined();
    expect(await pendingJob(queue(env), inboundParse.key({ id: fresh }))).toBeUndefined();
    // A second sweep while the job waits adds nothing (the parse key dedupes).
    const before = await queue(env).getWaitingCount();
    await sweepInbound(env.deps, at);
    expect(await queue(env).getWaitingCount()).toBe(before);
  });

  it('is scheduled when the inbound-mail pool starts, every minute, and the pool has a processor for each job', async ({ env }) => {
    const pools = await startPools(env.deps, ['inbound-mail']);
    try {
      expect(pools.started).toEqual(['inbound-mail']);
      const schedulers = await queue(env).getJobSchedulers();
      const sweep = schedulers.find((s) => s.key === inboundSweep.key({}));
      expect(sweep?.every).toBe(60_000);
      expect(inboundSweep.everyMs(env.config)).toBe(60_000);
      expect(sweep?.name).toBe('inbound.sweep');
    } finally {
      await pools.close();
    }
  });
});

describe('the parse try cap', () => {
  it('fails (for a retry) below the cap, then keeps a message that keeps failing as malformed with the reason', async ({ env }) => {
    const id = await store(env);
    const log = env.deps.logger;
    for (let i = 1; i < MAX_PARSE_TRIES; i++) {
      await expect(processWithinTries(env.deps, id, log, poison)).rejects.toThrow('mailparser choked');
      expect((await inboundRepository(env.deps.db).find(id))?.status).toBe('received');
    }
    expect(await processWithinTries(env.deps, id, log, poison)).toBe('gave-up');
    const row = await inboundRepository(env.deps.db).find(id);
    expect(row).toMatchObject({
      status: 'malformed',
      reason: 'could not be processed: mailparser choked on part 3',
      attempts: MAX_PARSE_TRIES,
    });
    // The sweep never picks it again.
    await backdate(env, 'inbound_messages', { id }, { received_at: 0 });
    await sweepInbound(env.deps);
    expect(await pendingJob(queue(env), inboundParse.key({ id }))).toBeUndefined();
  });

  it('never settles a message for Postgres or Redis being out of reach, until it has been tried too often', async ({ env }) => {
    const id = await store(env);
    const outage = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    };
    for (let i = 1; i <= MAX_COUNTED_TRIES; i++) {
      await expect(processWithinTries(env.deps, id, env.deps.logger, outage)).rejects.toThrow('ECONNREFUSED');
    }
    expect((await inboundRepository(env.deps.db).find(id))?.status).toBe('received');
    // One more (its tries died with the worker, or the outage never ends): kept, not run again.
    let ran = false;
    const run = async () => {
      ran = true;
    };
    expect(await processWithinTries(env.deps, id, env.deps.logger, run)).toBe('gave-up');
    expect(ran).toBe(false);
    expect(await inboundRepository(env.deps.db).find(id)).toMatchObject({
      status: 'malformed',
      reason: `could not be processed: gave up after ${MAX_COUNTED_TRIES} tries`,
    });
  });

  it('runs a message that processes fine once and counts the try', async ({ env }) => {
    const id = await store(env);
    let runs = 0;
    const run = async () => {
      runs++;
    };
    expect(await processWithinTries(env.deps, id, env.deps.logger, run)).toBe('done');
    expect(runs).toBe(1);
    expect((await inboundRepository(env.deps.db).find(id))?.attempts).toBe(1);
  });
});
