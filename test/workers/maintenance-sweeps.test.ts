import { type Job, QueueEvents } from 'bullmq';
import { afterAll, describe, expect } from 'vitest';
import { maintenanceQueue, maintenanceSweep } from '../../src/jobs/maintenance.js';
import { sweepsOf } from '../../src/jobs/sweep.js';
import { createRedis } from '../../src/redis.js';
import { type Pools, startPools } from '../../workers/main.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';

// Each area's maintenance sweep is its own repeating job on the `maintenance` queue. The single sweep it
// replaced ran them in a row: a throw in the rollups skipped retention and experiments until the next tick.
const SWEEP_MS = 300;
const RETENTION_MS = 700;
const SWEEPS = sweepsOf(maintenanceQueue.jobs);
/** The maintenance pool, started by hand once the previous version's state is in Redis (the fixture's start first). */
let started: Pools;
let events: QueueEvents;
/** Runs each sweep (by scheduler id) completed, as the queue's event stream tells them. */
const completed = new Map<string, number>();
let legacy: Job;

const schedulerOf = (jobId: string) => /^repeat:([^:]+):/.exec(jobId)?.[1];
const queue = (env: TestEnv) => env.deps.queues.get('maintenance')!;

it.override('options', {
  env: {
    ADMIN_USER: 'ops',
    ADMIN_PASSWORD: 'correct horse',
    MAINTENANCE_SWEEP_MS: String(SWEEP_MS),
    MAINTENANCE_RETENTION_SWEEP_MS: String(RETENTION_MS),
    WORKER_SCHEDULES_CHECK_MS: '500',
  },
});
it.beforeAll(async ({ env }) => {
  events = new QueueEvents('maintenance', {
    connection: createRedis(env.config, 'worker'),
    prefix: env.config.queuePrefix,
    lastEventId: '0-0',
  });
  events.on('completed', ({ jobId }) => {
    const id = schedulerOf(jobId);
    if (id) completed.set(id, (completed.get(id) ?? 0) + 1);
  });
  await events.waitUntilReady();
  // What a running system of the previous version has in Redis at deploy time: the single sweep's
  // scheduler, and a run of it already queued.
  await queue(env).upsertJobScheduler('maintenance-sweep', { every: 60_000 }, { name: 'maintenance.sweep', data: {} });
  legacy = await queue(env).add('maintenance.sweep', {});
  started = await startPools(env.deps, ['maintenance']);
}, 30_000);

afterAll(async () => {
  await started?.close();
  await events?.close();
});

describe('maintenance sweeps, one per area', () => {
  it('are listed in Redis (and so on the board) as separate repeating jobs, each under its name and interval', async ({ env }) => {
    const schedulers = await queue(env).getJobSchedulers(0, -1);
    const listed = Object.fromEntries(schedulers.map((s) => [s.key, { name: s.name, every: Number(s.every) }]));
    expect(listed).toEqual({
      'maintenance-turns': { name: 'maintenance.turns', every: SWEEP_MS },
      'maintenance-workflow-schedulers': { name: 'maintenance.workflow-schedulers', every: SWEEP_MS },
      'maintenance-workflow-runs': { name: 'maintenance.workflow-runs', every: SWEEP_MS },
      'maintenance-webhook-deliveries': { name: 'maintenance.webhook-deliveries', every: SWEEP_MS },
      'maintenance-conversions': { name: 'maintenance.conversions', every: SWEEP_MS },
      'maintenance-rollups': { name: 'maintenance.rollups', every: SWEEP_MS },
      'maintenance-retention': { name: 'maintenance.retention', every: RETENTION_MS },
      'maintenance-experiments': { name: 'maintenance.experiments', every: SWEEP_MS },
      'maintenance-events': { name: 'maintenance.events', every: SWEEP_MS },
      'maintenance-lead-imports': { name: 'maintenance.lead-imports', every: SWEEP_MS },
    });
    // Each sweep's runs carry its own name and retry policy, as Bull Board lists them.
    await waitFor(async () => {
      const names = new Set((await queue(env).getJobs(['delayed', 'waiting', 'active'])).map((j) => j.name));
      return SWEEPS.every((s) => names.has(s.name));
    }, 'a run of every sweep queued');
    const runs = await queue(env).getJobs(['delayed', 'waiting', 'active']);
    for (const sweep of SWEEPS) {
      const run = runs.find((j) => j.name === sweep.name)!;
      expect(run.opts.attempts).toBe(sweep.options.attempts);
    }
  });

  it('each show on Bull Board under its own name', async ({ env }) => {
    const auth = `Basic ${Buffer.from('ops:correct horse').toString('base64')}`;
    // The board's latest jobs of the queue, the way its page asks for them: each sweep's next run is
    // delayed, waiting or running at any moment, so a few looks see every one.
    const seen = new Set<string>();
    await waitFor(async () => {
      const res = await env
        .api()
        .get('/admin/queues/api/queues')
        .query({ activeQueue: 'maintenance', status: 'latest', page: 1, jobsPerPage: 100 })
        .set('Authorization', auth);
      expect(res.status).toBe(200);
      const maintenance = (res.body.queues as Array<{ name: string; jobs: Array<{ name: string }> }>).find(
        (q) => q.name === 'maintenance',
      )!;
      for (const job of maintenance.jobs) seen.add(job.name);
      return SWEEPS.every((sweep) => seen.has(sweep.name));
    }, 'every sweep on the board');
    expect([...seen].filter((n) => n.startsWith('maintenance.') && n !== maintenanceSweep.name).sort()).toEqual(
      SWEEPS.map((s) => s.name).sort(),
    );
  });

  it('remove the retired single sweep’s scheduler at start, and process a job of it left in Redis', async ({ env }) => {
    expect(await queue(env).getJobScheduler(maintenanceSweep.key({}))).toBeUndefined();
    expect(await legacy.waitUntilFinished(events, 20_000)).toEqual({ retired: true });
    expect((await queue(env).getJobs(['delayed', 'waiting'])).filter((j) => j.name === maintenanceSweep.name)).toEqual([]);
  });

  it('remove the retired scheduler again when a process of the old version puts it back (a rolling deploy)', async ({ env }) => {
    await queue(env).upsertJobScheduler('maintenance-sweep', { every: 60_000 }, { name: 'maintenance.sweep', data: {} });
    await waitFor(async () => !(await queue(env).getJobScheduler('maintenance-sweep')), 'the schedule check removed it', 10_000);
    expect((await queue(env).getJobs(['delayed'])).filter((j) => j.name === maintenanceSweep.name)).toEqual([]);
  });

  it('run on schedule while one of them fails on every run (a table only it reads is gone), and that one recovers', async ({ env }) => {
    // The rollups' own table (no other sweep reads it; the watermark is also read by retention's events kind).
    const rollups = 'maintenance-rollups';
    const others = SWEEPS.map((s) => s.key({})).filter((id) => id !== rollups);
    await env.deps.db.raw('ALTER TABLE results_rollup_deltas RENAME TO results_rollup_deltas_away');
    try {
      const before = new Map(others.map((id) => [id, completed.get(id) ?? 0]));
      const rollupsBefore = completed.get(rollups) ?? 0;
      // Runs of the rollups sweep that failed on the missing table (a retry is waiting, or it failed for good).
      const failedRollups = async () =>
        (await queue(env).getJobs(['delayed', 'failed'])).filter(
          (j) => j.name === 'maintenance.rollups' && /results_rollup_deltas/.test(j.failedReason ?? ''),
        ).length;
      await waitFor(async () => (await failedRollups()) >= 2, 'two runs of the rollups sweep failed', 20_000);
      // Meanwhile every other sweep completed at least two runs after the fault began.
      await waitFor(
        async () => others.every((id) => (completed.get(id) ?? 0) >= before.get(id)! + 2),
        'every other sweep ran twice',
        20_000,
      );
      expect(completed.get(rollups) ?? 0).toBe(rollupsBefore);
    } finally {
      await env.deps.db.raw('ALTER TABLE results_rollup_deltas_away RENAME TO results_rollup_deltas');
    }
    const after = completed.get(rollups) ?? 0;
    await waitFor(async () => (completed.get(rollups) ?? 0) > after, 'the rollups sweep completed again', 20_000);
  }, 60_000);
});
