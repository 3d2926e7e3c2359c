import { describe, expect, it } from 'vitest';
import { resultsRepository } from '../../src/results/results.repository.js';
import { migrateUpTo, migrationDatabase } from '../helpers/migration-db.js';

/**
 * The migration that partitions `channel_events` by month runs on a database with events: every row moves into the
 * partition of its month (the default one past 13 months back), keeps its id, and its ref goes into
 * `channel_event_refs`, so an event recorded before the migration still counts once after it. Down restores the old
 * table with its unique index.
 */
const MIGRATION = '20261130110000_channel_events_partitioned';
const DAY = 86_400_000;
const scratch = migrationDatabase();

const monthName = (t: number) => {
  const d = new Date(t);
  return `channel_events_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

// Raw reads and writes throughout: a migration test checks the schema itself, on a scratch database.
describe('the channel events partitioning migration', () => {
  it('moves every event into its month, fills the refs from them, keeps the ids, and down restores the old table', async () => {
    const db = await scratch.open();
    await migrateUpTo(db, MIGRATION);
    const now = Date.now();
    await db.raw(`INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', 0), ('a2', 'B', 0)`);
    const seed = [
      { id: 1, account_id: 'a1', channel: 'seo', type: 'visit', at: now, ref_id: 'r1', recorded_at: now },
      // Reported late: its ref is remembered from when it was recorded.
      { id: 2, account_id: 'a1', channel: 'email', type: 'sent', at: now - 200 * DAY, ref_id: 's1', recorded_at: now - DAY },
      { id: 3, account_id: 'a1', channel: 'seo', type: 'visit', at: now - 30 * DAY, ref_id: null, recorded_at: now - 30 * DAY },
      { id: 4, account_id: 'a2', channel: 'seo', type: 'visit', at: now - 500 * DAY, ref_id: 'r1', recorded_at: now - 500 * DAY },
    ];
    await db('channel_events').insert(seed);
    await db.raw(`SELECT setval('channel_events_id_seq', 4)`);

    await db.migrate.up();

    const { rows } = (await db.raw('SELECT id::int AS id, tableoid::regclass::text AS part FROM channel_events')) as {
      rows: { id: number; part: string }[];
    };
    expect(Object.fromEntries(rows.map((r) => [r.id, r.part]))).toEqual({
      1: monthName(now),
      2: monthName(now - 200 * DAY),
      3: monthName(now - 30 * DAY),
      4: 'channel_events_pdefault',
    });
    const refs = (await db('channel_event_refs').select('account_id', 'channel', 'type', 'ref_id', 'at')) as Record<string, unknown>[];
    expect(refs.map((r) => ({ ...r, at: Number(r.at) })).sort((x, y) => Number(x.at) - Number(y.at))).toEqual([
      { account_id: 'a2', channel: 'seo', type: 'visit', ref_id: 'r1', at: now - 500 * DAY },
      { account_id: 'a1', channel: 'email', type: 'sent', ref_id: 's1', at: now - DAY },
      { account_id: 'a1', channel: 'seo', type: 'visit', ref_id: 'r1', at: now },
    ]);

    // An event recorded before the migration still counts once; a new one takes the next id.
    const repo = resultsRepository(db);
    const again = { ...seed[1]!, decided_by: null, amount: null, at: now };
    expect(await repo.insertEvents([again])).toBe(0);
    expect(await repo.insertEvents([{ ...again, ref_id: 's2' }])).toBe(1);
    expect(Number((await db('channel_events').where({ ref_id: 's2' }).first('id'))!.id)).toBe(5);

    await db.migrate.down();
    const kind = await db.raw(`SELECT relkind FROM pg_class WHERE relname = 'channel_events'`);
    expect(kind.rows).toEqual([{ relkind: 'r' }]);
    expect((await db('channel_events').pluck('id')).map(Number).sort()).toEqual([1, 2, 3, 4, 5]);
    await expect(db('channel_events').insert({ ...seed[0]!, id: 6 })).rejects.toMatchObject({ constraint: 'channel_events_ref_unique' });
    expect((await db.raw(`SELECT to_regclass('channel_event_refs') AS t`)).rows).toEqual([{ t: null }]);
  });
});
