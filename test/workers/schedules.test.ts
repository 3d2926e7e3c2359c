import { describe, expect } from 'vitest';
import { startPools } from '../../workers/main.js';
import { buildTurn } from '../helpers/factories.js';
import { clearRedis, setupTestEnv } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { privateRedis } from '../helpers/outages.js';
import { waitFor } from '../helpers/processes.js';
import { turnRow } from '../helpers/rows.js';

// The repeating jobs (sweeps, provider polls) live only in Redis, as BullMQ job schedulers: a Redis that
// loses its data loses them. Every pool that registers one runs here, in-process.
const CHECK_MS = 500;
it.override('options', {
  env: { WORKER_SCHEDULES_CHECK_MS: String(CHECK_MS), MAINTENANCE_SWEEP_MS: '1000', MAINTENANCE_ORPHAN_AFTER_MS: '500' },
  pools: ['maintenance', 'card-timers', 'shipments', 'inbound-mail', 'provider-polls', 'agent-turns'],
});

const EXPECTED = [
  ['maintenance', 'maintenance-turns'],
  ['maintenance', 'maintenance-workflow-schedulers'],
  ['maintenance', 'maintenance-workflow-runs'],
  ['maintenance', 'maintenance-webhook-deliveries'],
  ['maintenance', 'maintenance-conversions'],
  ['maintenance', 'maintenance-rollups'],
  ['maintenance', 'maintenance-retention'],
  ['maintenance', 'maintenance-experiments'],
  ['maintenance', 'maintenance-events'],
  ['card-timers', 'card-sweep'],
  ['shipments', 'mail-sweep'],
  ['inbound-mail', 'inbound-sweep'],
  ['provider-polls', 'provider-poll-sweep'],
] as const;

/** The expected schedulers missing from Redis. */
async function missing(deps: TestEnv['deps']): Promise<string[]> {
  const gone: string[] = [];
  for (const [queue, id] of EXPECTED) if (!(await deps.queues.get(queue)!.getJobScheduler(id))) gone.push(id);
  return gone;
}

describe('repeating jobs after Redis lost its data', () => {
  it('are registered again within the check interval, and overdue work is then done without a restart', async ({ env }) => {
    expect(await missing(env.deps)).toEqual([]);
    const { accountId } = await env.tenant();
    // This file's keys are its whole Redis (its own prefix): deleting them is a flush as far as it can tell.
    await clearRedis(env.deps, env.config);
    const flushed = Date.now();
    // Work whose job went with the flush: a turn recorded in Postgres that no job will run. Only the
    // maintenance turns sweep, once it is back, finds it.
    const { turn } = await env.deps.db.transaction((trx) => buildTurn(trx, env.config, accountId, { text: 'still there?' }));

    await waitFor(async () => (await missing(env.deps)).length === 0, 'schedulers back', 10_000);
    const back = Date.now() - flushed;
    // One check interval, plus the machine's slack (two cores shared by parallel test files).
    expect(back).toBeLessThan(CHECK_MS + 2_500);
    await waitFor(async () => (await turnRow(env, turn.id)).status === 'replied', 'the overdue turn replied', 20_000);
  }, 40_000);

  it('are registered again after a Redis without persistence restarts, on reconnect, without waiting for the check', async () => {
    const redis = await privateRedis();
    // A check interval far beyond the test: only the reconnect can bring them back.
    const other = await setupTestEnv({ env: { REDIS_URL: redis.url, WORKER_SCHEDULES_CHECK_MS: '3600000' } });
    const pools = await startPools(other.deps, ['maintenance', 'card-timers', 'shipments', 'inbound-mail', 'provider-polls']);
    try {
      expect(await missing(other.deps)).toEqual([]);
      await redis.stop();
      await redis.start();
      await waitFor(async () => (await missing(other.deps)).length === 0, 'schedulers back after the restart', 15_000);
    } finally {
      await pools.close();
      await other.close();
      await redis.stop();
    }
  }, 40_000);
});
