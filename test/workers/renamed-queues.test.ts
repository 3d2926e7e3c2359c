import { type Job, QueueEvents } from 'bullmq';
import { afterAll, describe, expect } from 'vitest';
import { FORMER_QUEUES } from '../../src/jobs/catalog.js';
import { formerProviderPoll, formerProviderPollSweep } from '../../src/jobs/inbound-mail.js';
import { providerPollSweep } from '../../src/jobs/provider-polls.js';
import { mailSweep, sequenceStep } from '../../src/jobs/shipments.js';
import { createRedis } from '../../src/redis.js';
import { type Pools, startPools } from '../../workers/main.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';

// A rolling deploy of the release that renamed `mail-sends` to `shipments` and moved the provider polls
// from `inbound-mail` to `provider-polls`: Redis holds what the previous release left (schedulers, queued
// runs) and its processes, still running for a while, keep adding there. Nothing of it may be lost.
/** The new release's pools, started by hand once the previous release's state is in Redis (the fixture's start first). */
let started: Pools;
const events = new Map<string, QueueEvents>();
const left: Record<string, Job> = {};
const q = (env: TestEnv, name: string) => env.deps.queues.get(name)!;

it.override('options', { env: { WORKER_SCHEDULES_CHECK_MS: '500' } });
it.beforeAll(async ({ env }) => {
  for (const name of ['mail-sends', 'inbound-mail']) {
    const e = new QueueEvents(name, { connection: createRedis(env.config, 'worker'), prefix: env.config.queuePrefix, lastEventId: '0-0' });
    await e.waitUntilReady();
    events.set(name, e);
  }
  const { accountId } = await env.tenant();
  // What the previous release has in Redis at deploy time: its sweeps' schedulers under the old names,
  // and runs of its jobs already queued there.
  await q(env, 'mail-sends').upsertJobScheduler('mail-sweep', { every: 60_000 }, { name: mailSweep.name, data: {} });
  await q(env, 'inbound-mail').upsertJobScheduler('provider-poll-sweep', { every: 60_000 }, { name: providerPollSweep.name, data: {} });
  left.sweep = await q(env, 'mail-sends').add(mailSweep.name, {});
  left.step = await q(env, 'mail-sends').add(sequenceStep.name, { accountId, sequenceId: 'no-such-sequence', step: 1 });
  left.poll = await q(env, 'inbound-mail').add(formerProviderPoll.name, { accountId, kind: 'network' });
  started = await startPools(env.deps, ['shipments', 'inbound-mail', 'provider-polls']);
}, 60_000);

afterAll(async () => {
  await started?.close();
  for (const e of events.values()) await e.close();
});

describe('renamed queues during a rolling deploy', () => {
  it('open the former names for one release, each naming its queue now', ({ env }) => {
    expect([...FORMER_QUEUES]).toEqual([['mail-sends', 'shipments']]);
    expect(env.deps.queues.has('mail-sends')).toBe(true);
  });

  it('process the jobs left under the former queue name with the new pool’s handlers', async () => {
    expect(await left.sweep!.waitUntilFinished(events.get('mail-sends')!, 20_000)).toEqual({ settled: 0, steps: 0 });
    // A step of a sequence that does not exist: the handler ran and found nothing to ship.
    expect(await left.step!.waitUntilFinished(events.get('mail-sends')!, 20_000)).toBe('not_active');
  });

  it('process a job an old process adds to the former name after the new pools started', async ({ env }) => {
    const late = await q(env, 'mail-sends').add(mailSweep.name, {});
    expect(await late.waitUntilFinished(events.get('mail-sends')!, 20_000)).toEqual({ settled: 0, steps: 0 });
  });

  it('move the sweeps’ schedules to the new queues, and remove them again when an old process puts them back', async ({ env }) => {
    expect(await q(env, 'mail-sends').getJobScheduler('mail-sweep')).toBeUndefined();
    expect(await q(env, 'shipments').getJobScheduler('mail-sweep')).toMatchObject({ name: mailSweep.name });
    expect(await q(env, 'inbound-mail').getJobScheduler(formerProviderPollSweep.key({}))).toBeUndefined();
    expect(await q(env, 'provider-polls').getJobScheduler('provider-poll-sweep')).toMatchObject({ name: providerPollSweep.name });
    await q(env, 'mail-sends').upsertJobScheduler('mail-sweep', { every: 60_000 }, { name: mailSweep.name, data: {} });
    await q(env, 'inbound-mail').upsertJobScheduler('provider-poll-sweep', { every: 60_000 }, { name: providerPollSweep.name, data: {} });
    await waitFor(
      async () =>
        !(await q(env, 'mail-sends').getJobScheduler('mail-sweep')) &&
        !(await q(env, 'inbound-mail').getJobScheduler('provider-poll-sweep')),
      'the schedule check removed both',
      10_000,
    );
  });

  it('run a provider poll left on the inbound-mail queue, as the previous release did', async () => {
    const result = await left.poll!.waitUntilFinished(events.get('inbound-mail')!, 20_000);
    expect(result).toEqual({ connected: false, events: 0, applied: 0, ignored: 0 });
  });
});
