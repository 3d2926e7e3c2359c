import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db.js';
import { getResults } from '../helpers/scoreboard.js';
import { rollUpAll } from '../../src/results/rollups.service.js';
import { migrateUpTo, migrationDatabase } from '../helpers/migration-db.js';
import { until } from '../helpers/processes.js';

/**
 * The migration that adds the minute grain, on a database with history: counts folded before it are in the hourly
 * rollups only, and deltas written before it carry an hour bucket, one of them for a time ahead of when it was
 * written (a conversion's occurredAt may be up to five minutes ahead). `minutes_from` lies past all of them, and
 * `/results` stays exact across the upgrade on both sides of it.
 */
const ROLLUPS = '20261128100000_results_rollups';
const MINUTES = '20261130100000_minute_rollups';
const scratch = migrationDatabase();

const HOUR = 3_600_000;
const MINUTE = 60_000;
const DAY = 24 * HOUR;
/** When the history "was written": mid-hour. */
const WRITTEN = 1_800_000_000_000 + 10 * HOUR + 25 * MINUTE + 4_321;

/** `n` channel events of the account, the k-th `step` ms before `last`, of two channels and a few types. */
async function events(d: Db, tag: string, last: number, n: number, step: number) {
  const types = [
    ['email', 'sent'],
    ['email', 'reply'],
    ['network', 'message_sent'],
  ];
  const rows = Array.from({ length: n }, (_, k) => {
    const [channel, type] = types[k % types.length]!;
    return { account_id: 'a1', channel, type, at: last - k * step, ref_id: `${tag}-${k}`, recorded_at: WRITTEN, amount: k % 5 };
  });
  await d('channel_events').insert(rows);
}

/** `n` turns that replied, the k-th `step` ms before `last`, and one aggregated conversion at `last`. */
async function work(d: Db, tag: string, last: number, n: number, step: number) {
  await d('agent_turns').insert(
    Array.from({ length: n }, (_, k) => {
      const at = last - k * step;
      const begun = at - 1_000;
      return {
        id: `${tag}-${k}`,
        account_id: 'a1',
        kind: 'message',
        origin: 'api',
        status: 'replied',
        finished_at: at,
        ...{
          created_at: begun,
          not_before: begun,
          started_at: begun,
        },
      };
    }),
  );
  await d('conversions').insert({
    account_id: 'a1',
    event_id: `${tag}-conv`,
    name: 'purchase',
    value: '12.5000',
    currency: 'USD',
    channel: 'email',
    occurred_at: last,
    received_at: WRITTEN,
    aggregated_at: WRITTEN,
  });
}

async function expectSameAsRaw(d: Db, now: number, sinces: number[]) {
  for (const since of sinces) {
    const rolled = await getResults(d, 'a1', since, now);
    expect(rolled, `since ${since} now ${now}`).toEqual(await getResults(d, 'a1', since, now, true, { rollups: false }));
  }
}

describe('the minute-rollups migration', { timeout: 120_000 }, () => {
  it('sets minutes_from past every count folded by the hour, and /results stays exact on both sides of it', async () => {
    const db = await scratch.open();
    await migrateUpTo(db, ROLLUPS);
    await db.raw(`INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', 0)`);
    await db.raw(`INSERT INTO channel_connections (account_id, channel, connected_at) VALUES ('a1', 'email', 0), ('a1', 'network', 0)`);
    // Folded by the rollups migration's backfill: hourly only.
    await events(db, 'old', WRITTEN - 2 * HOUR, 300, 7 * MINUTE + 13);
    await work(db, 'old', WRITTEN - 2 * HOUR, 40, 41 * MINUTE);
    await migrateUpTo(db, MINUTES);
    // Written since: events not folded yet, deltas with an hour bucket, a conversion four minutes ahead.
    await events(db, 'new', WRITTEN, 200, 3 * MINUTE + 7);
    await work(db, 'new', WRITTEN + 4 * MINUTE, 20, 13 * MINUTE);

    await db.migrate.latest();

    const { rows } = (await db.raw(`SELECT minutes_from::float8 AS m FROM results_rollup_watermark`)) as { rows: { m: number }[] };
    const minutesFrom = rows[0]!.m;
    // The end of the hour of the conversion ahead of time (the latest count with an hour bucket).
    expect(minutesFrom).toBe(Math.floor((WRITTEN + 4 * MINUTE) / HOUR) * HOUR + HOUR);
    // A pass of the older release, which folds hours only, cannot move the watermark.
    await expect(db.raw('UPDATE results_rollup_watermark SET xid = xid')).rejects.toThrow(/older release/);

    await until(
      async () => {
        await rollUpAll(db);
        return (
          (await db('results_rollup_deltas').first()) === undefined &&
          !(
            await db.raw(`SELECT 1 FROM channel_events
          WHERE xid >= (SELECT xid FROM results_rollup_watermark)`)
          ).rows.length
        );
      },
      30_000,
      100,
    );
    // After the upgrade: history on both sides of minutes_from, some of it not folded yet.
    await events(db, 'after', minutesFrom + 3 * HOUR, 150, 2 * MINUTE + 11);
    await work(db, 'after', minutesFrom + 3 * HOUR, 20, 17 * MINUTE);
    await rollUpAll(db);
    await events(db, 'tail', minutesFrom + 2 * HOUR, 30, 9 * MINUTE);

    const sinces = [minutesFrom - 1, minutesFrom + 17 * MINUTE + 3, minutesFrom - 40 * MINUTE - 9, minutesFrom - DAY + 5];
    for (const now of [minutesFrom + 3 * HOUR + 13 * MINUTE + 7, minutesFrom + 27 * MINUTE + 2, WRITTEN + 5 * MINUTE]) {
      await expectSameAsRaw(db, now, [...sinces, now - HOUR - 1, now - 3 * HOUR - 31 * MINUTE]);
    }
  });
});
