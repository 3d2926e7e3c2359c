import { describe, expect } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { recordChannelEvent } from '../../src/results/channel-events.js';
import { type EventRow, resultsRepository } from '../../src/results/results.repository.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { foldAccount } from '../helpers/rollups.js';
import { rows } from '../helpers/rows.js';

/**
 * `channel_events` partitioned by month (docs/decisions/retention.md, "Partitioning by time"): a month wholly past
 * CHANNEL_EVENT_RETENTION_DAYS is dropped whole once the rollups have counted it, and the refs that dedupe events
 * (`channel_event_refs`) are trimmed by rows at the same horizon.
 */
const DAY = 86_400_000;
const log = createLogger('silent');

/** Every event of the account in the rollups (test/helpers/rollups.ts). */
const foldAll = (env: TestEnv, accountId: string) => foldAccount(env.deps.db, accountId);

/** The month partition holding `t`, made if it is missing (a month before the migration's). */
async function monthOf(env: TestEnv, t: number) {
  const d = new Date(t);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const m = { name: `channel_events_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`, start };
  await env.deps.db.raw(
    `CREATE TABLE IF NOT EXISTS ${m.name} PARTITION OF channel_events
       FOR VALUES FROM (${start}) TO (${Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)})`,
  );
  return m;
}

const partitions = async (env: TestEnv) =>
  (
    await env.deps.db.raw(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                           WHERE i.inhparent = 'channel_events'::regclass`)
  ).rows.map((r: { name: string }) => r.name) as string[];

/** An event recorded at `recordedAt` (a writer's clock), through the repository every writer uses. */
const event = (accountId: string, refId: string, at: number, recordedAt: number): EventRow => ({
  account_id: accountId,
  channel: 'seo',
  type: 'visit',
  at,
  decided_by: null,
  amount: null,
  ref_id: refId,
  recorded_at: recordedAt,
});

const refsOf = async (env: TestEnv, accountId: string) =>
  ((await rows(env, 'channel_event_refs', { account_id: accountId }).pluck('ref_id')) as string[]).sort();
const eventRefsOf = async (env: TestEnv, accountId: string) =>
  ((await rows(env, 'channel_events', { account_id: accountId }).pluck('ref_id')) as string[]).sort();

describe('channel events partitioned by month', () => {
  it('drops a month whole once all of it is past the retention and counted, and trims the refs as old', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const old = await monthOf(env, now - 300 * DAY);
    const repo = resultsRepository(env.deps.db);
    await repo.insertEvents([
      event(accountId, 'old-1', old.start, old.start),
      event(accountId, 'old-2', old.start + DAY, old.start + DAY),
      event(accountId, 'fresh', now - DAY, now - DAY),
    ]);
    await foldAll(env, accountId);

    const pass = await runRetentionPass(env.deps, log, { now });
    expect(pass.partitions.dropped).toContain(old.name);
    expect(await partitions(env)).not.toContain(old.name);
    expect(await eventRefsOf(env, accountId)).toEqual(['fresh']);
    expect(await refsOf(env, accountId)).toEqual(['fresh']);
    expect(pass.removed.channelEventRefs).toBeGreaterThanOrEqual(2);
    // A replay older than the retention counts again (it is no longer remembered); a recent one does not.
    expect(await repo.insertEvents([event(accountId, 'old-1', old.start, now)])).toBe(1);
    expect(await repo.insertEvents([event(accountId, 'fresh', now - DAY, now)])).toBe(0);
    expect((await runRetentionPass(env.deps, log, { now })).partitions.dropped).toEqual([]);
  });

  it('keeps a month holding an event the rollups have not counted yet, and remembers its ref as long as one recorded now', async ({
    env,
  }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const old = await monthOf(env, now - 200 * DAY);
    // Recorded now with a time long past: a late report.
    expect(await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: old.start, refId: 'late' })).toBe(true);

    const held = await runRetentionPass(env.deps, log, { now });
    expect(held.partitions.dropped).not.toContain(old.name);
    expect(held.skipped).toEqual([]);
    expect(await partitions(env)).toContain(old.name);
    expect(await eventRefsOf(env, accountId)).toEqual(['late']);

    await foldAll(env, accountId);
    expect((await runRetentionPass(env.deps, log, { now })).partitions.dropped).toContain(old.name);
    expect(await eventRefsOf(env, accountId)).toEqual([]);
    expect(await refsOf(env, accountId)).toEqual(['late']);
    expect(await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: old.start, refId: 'late' })).toBe(false);
  });

  it('trims refs in bounded statements', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const at = now - 100 * DAY;
    await resultsRepository(env.deps.db).insertEvents(['a', 'b', 'c', 'd', 'e'].map((r) => event(accountId, `trim-${r}`, at, at)));
    const pass = () => runRetentionPass(env.deps, log, { now, only: ['channelEventRefs'], batchRows: 2, passBatches: 1 });
    // Other tests' refs are as old: at most 2 a pass, until the account's are gone (bounded).
    for (let i = 0; i < 10 && (await refsOf(env, accountId)).length; i++)
      expect((await pass()).removed.channelEventRefs).toBeLessThanOrEqual(2);
    expect(await refsOf(env, accountId)).toEqual([]);
  });
});
