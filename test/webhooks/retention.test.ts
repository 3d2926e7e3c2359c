import { describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { maintenancePool } from '../../workers/maintenance.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { makeHook } from './helpers.js';
import { rows } from '../helpers/rows.js';
import { seedRows } from '../helpers/row-setup.js';

const DAY = 24 * 60 * 60 * 1000;
const log = createLogger('silent');
it.override('options', { env: { WEBHOOK_DELIVERY_RETENTION_DAYS: '7' } });

type Row = { id: string; outcome: string; turn_id?: string | null; at: number };

async function logRows(env: TestEnv, accountId: string, hookId: string, entries: Row[]) {
  await seedRows(
    env,
    'webhook_deliveries',
    entries.map((r) => ({
      account_id: accountId,
      hook_id: hookId,
      bytes: 2,
      body: r.outcome === 'Rate Limited' ? null : '{}',
      turn_id: null,
      ...r,
    })),
  );
}

const pruneDeliveries = async (env: TestEnv, now: number, o: { batchRows?: number; passBatches?: number } = {}) => ({
  pruned: (await runRetentionPass(env.deps, log, { now, only: ['webhookDeliveries'], ...o })).removed.webhookDeliveries,
});

const ids = async (env: TestEnv, hookId: string) =>
  (await rows(env, 'webhook_deliveries', { hook_id: hookId }).orderBy('id').select('id')).map((r) => r.id);

describe('delivery log retention (WEBHOOK_DELIVERY_RETENTION_DAYS)', () => {
  it('deletes deliveries older than the retention, in chunks, but never an accepted one the agent has not got', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'kept');
    const busy = await makeHook(env, accountId, 'busy');
    await logRows(env, accountId, hook.hookId, [
      { id: 'dlv_r_oldhanded', outcome: 'Accepted', turn_id: 'turn_gone', at: now - 8 * DAY },
      { id: 'dlv_r_oldlimited', outcome: 'Rate Limited', at: now - 8 * DAY },
      { id: 'dlv_r_olderror', outcome: 'Worker Error', at: now - 30 * DAY },
      { id: 'dlv_r_oldunhanded', outcome: 'Accepted', at: now - 9 * DAY },
      { id: 'dlv_r_newhanded', outcome: 'Accepted', turn_id: 'turn_kept', at: now - 6 * DAY },
      { id: 'dlv_r_newlimited', outcome: 'Rate Limited', at: now - 1 * DAY },
    ]);
    await logRows(
      env,
      accountId,
      busy.hookId,
      Array.from({ length: 12 }, (_, i) => ({
        id: `dlv_r_busy${String(i).padStart(2, '0')}`,
        outcome: 'Accepted',
        turn_id: `turn_${i}`,
        at: now - 10 * DAY + i,
      })),
    );

    expect(await pruneDeliveries(env, now, { batchRows: 5, passBatches: 20 })).toEqual({ pruned: 15 });
    expect(await ids(env, hook.hookId)).toEqual(['dlv_r_newhanded', 'dlv_r_newlimited', 'dlv_r_oldunhanded']);
    expect(await ids(env, busy.hookId)).toEqual([]);
    expect(await pruneDeliveries(env, now)).toEqual({ pruned: 0 });
  });

  it('stops after RETENTION_PASS_BATCHES statements in one sweep and goes on at the next', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'many');
    await logRows(
      env,
      accountId,
      hook.hookId,
      Array.from({ length: 9 }, (_, i) => ({ id: `dlv_m_${i}`, outcome: 'Rate Limited', at: now - 8 * DAY + i })),
    );
    expect(await pruneDeliveries(env, now, { batchRows: 3, passBatches: 2 })).toEqual({ pruned: 6 });
    // The oldest went first.
    expect(await ids(env, hook.hookId)).toEqual(['dlv_m_6', 'dlv_m_7', 'dlv_m_8']);
    expect(await pruneDeliveries(env, now, { batchRows: 3, passBatches: 2 })).toEqual({ pruned: 3 });
  });

  it('is part of the maintenance retention sweep', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'swept');
    await logRows(env, accountId, hook.hookId, [{ id: 'dlv_s_old', outcome: 'Rate Limited', at: Date.now() - 8 * DAY }]);
    const result = (await maintenancePool.handlers.retentionSweep({}, { deps: env.deps, log, job: {} as never })) as {
      removed: { webhookDeliveries: number };
    };
    expect(result.removed.webhookDeliveries).toBeGreaterThanOrEqual(1);
    expect(await ids(env, hook.hookId)).toEqual([]);
  });

  it('reads the retention in days and refuses zero', () => {
    expect(loadConfig({}).webhooks.deliveryRetentionMs).toBe(30 * DAY);
    expect(loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: '90' }).webhooks.deliveryRetentionMs).toBe(90 * DAY);
    expect(() => loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: '0' })).toThrow(ConfigError);
    try {
      loadConfig({ WEBHOOK_DELIVERY_RETENTION_DAYS: '0' });
    } catch (err) {
      expect((err as ConfigError).problems.join(' ')).toContain('WEBHOOK_DELIVERY_RETENTION_DAYS');
    }
  });
});
