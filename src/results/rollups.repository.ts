import { accountExistsSql } from '../accounts/settings.repository.js';
import type { Queryable, Trx } from '../db.js';
import { inSpans, type WindowSplit } from './rollup-window.js';

/**
 * Rows the rollup pass has not folded yet: at or above the watermark the caller read (`?`, which lets the planner
 * see how few they are) and at or above the one this statement's snapshot sees (a pass that committed since then
 * already counted those below it). Rollups and this tail are read in one statement, so each row counts once.
 */
export const UNFOLDED = `xid >= ?::xid8 AND xid >= (SELECT xid FROM results_rollup_watermark WHERE name = 'results')`;

const HOUR_OF = (col: string) => `(${col} / 3600000) * 3600000`;
const MINUTE_OF = (col: string) => `(${col} / 60000) * 60000`;

/** Where the rollups stand: the watermark (a transaction id) and the time from which the minute rollups are complete. */
export interface RollupMark {
  xid: string;
  minutesFrom: number;
}

export function rollupsRepository(q: Queryable) {
  return {
    /** The watermark (every event and delta of a transaction below it is in the rollups) and `minutes_from`. */
    async watermark(): Promise<RollupMark> {
      const row = (await q('results_rollup_watermark')
        .where({ name: 'results' })
        .first(q.raw('xid::text AS xid'), q.raw('minutes_from::float8 AS "minutesFrom"'))) as RollupMark;
      return row;
    },

    /**
     * Harness counts per metric from the rollups of `split.rolled` (hours) and `split.minutes` (minutes) and the
     * deltas of both not folded yet, split at `since`.
     */
    async harness(accountId: string, since: number, split: Omit<WindowSplit, 'raw'>, watermark: string) {
      const h = inSpans('bucket', split.rolled);
      const m = inSpans('bucket', split.minutes);
      const s = inSpans('bucket', [...split.rolled, ...split.minutes]);
      const { rows } = (await q.raw(
        `SELECT metric, current, sum(n)::int AS n FROM (
           SELECT metric, bucket >= ? AS current, n FROM results_rollups
            WHERE account_id = ? AND metric <> 'conversion_value' AND ${h.sql}
           UNION ALL
           SELECT metric, bucket >= ?, n FROM results_rollups_minute
            WHERE account_id = ? AND metric <> 'conversion_value' AND ${m.sql}
           UNION ALL
           SELECT metric, bucket >= ?, n FROM results_rollup_deltas
            WHERE account_id = ? AND metric <> 'conversion_value' AND ${UNFOLDED} AND ${s.sql}
         ) x GROUP BY 1, 2`,
        [since, accountId, ...h.bindings, since, accountId, ...m.bindings, since, accountId, watermark, ...s.bindings],
      )) as { rows: { metric: string; current: boolean; n: number }[] };
      return rows;
    },
  };
}

/** The fold, inside one transaction `trx` (the pass's). */
export function rollupFold(trx: Trx) {
  return {
    /**
     * Locks the watermark row; null when another pass holds it. Says the pass folds both grains
     * (`growth.rollup_grain`): the watermark refuses to move for a pass that does not (migration 20261130100000).
     */
    async lockWatermark(): Promise<string | null> {
      const { rows } = (await trx.raw(
        `SELECT xid::text AS xid FROM results_rollup_watermark, set_config('growth.rollup_grain', 'minute', true)
          WHERE name = 'results' FOR UPDATE OF results_rollup_watermark SKIP LOCKED`,
      )) as { rows: { xid: string }[] };
      return rows[0]?.xid ?? null;
    },

    /** The oldest transaction still running: every transaction below it has committed or rolled back. */
    async settled(): Promise<string> {
      const { rows } = (await trx.raw('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xid')) as { rows: { xid: string }[] };
      return rows[0]!.xid;
    },

    /** The xid of the `limit`-th row at or above `lo` and below `hi` of `table`, if there are that many. */
    async nthXid(table: 'channel_events' | 'results_rollup_deltas', lo: string, hi: string, limit: number): Promise<string | null> {
      const { rows } = (await trx.raw(
        `SELECT xid::text AS xid FROM ${table} WHERE xid >= ?::xid8 AND xid < ?::xid8 ORDER BY xid OFFSET ? LIMIT 1`,
        [lo, hi, limit],
      )) as { rows: { xid: string }[] };
      return rows[0]?.xid ?? null;
    },

    /** Adds the events of transactions in [lo, hi) to the minute and hourly rollups; answers how many events. */
    async foldEvents(lo: string, hi: string): Promise<number> {
      const { rows } = (await trx.raw(
        `WITH src AS (
           SELECT account_id, ${MINUTE_OF('at')} AS bucket, channel, type, coalesce(decided_by, '') AS decided_by,
                  count(*) AS n, coalesce(sum(amount), 0) AS total, count(amount) AS with_amount
             FROM channel_events WHERE xid >= ?::xid8 AND xid < ?::xid8 AND NOT demo
            GROUP BY 1, 2, 3, 4, 5
         ), minutes AS (
           INSERT INTO channel_event_rollups_minute AS r (account_id, bucket, channel, type, decided_by, n, total, with_amount)
           SELECT * FROM src
           ON CONFLICT (account_id, bucket, channel, type, decided_by) DO UPDATE
             SET n = r.n + excluded.n, total = r.total + excluded.total, with_amount = r.with_amount + excluded.with_amount
         ), hours AS (
           INSERT INTO channel_event_rollups AS r (account_id, bucket, channel, type, decided_by, n, total, with_amount)
           SELECT account_id, ${HOUR_OF('bucket')}, channel, type, decided_by, sum(n), sum(total), sum(with_amount)
             FROM src GROUP BY 1, 2, 3, 4, 5
           ON CONFLICT (account_id, bucket, channel, type, decided_by) DO UPDATE
             SET n = r.n + excluded.n, total = r.total + excluded.total, with_amount = r.with_amount + excluded.with_amount
         ) SELECT coalesce(sum(n), 0)::int AS n FROM src`,
        [lo, hi],
      )) as { rows: { n: number }[] };
      return rows[0]!.n;
    },

    /**
     * Moves the deltas below `hi` into the minute rollups and, by the hour of their bucket, the hourly ones (deleting
     * them); answers how many deltas. A delta written before the minute grain has an hour bucket: it lands on the
     * hour's first minute, before `minutes_from`, where the minute rollups are never read.
     */
    async foldDeltas(hi: string): Promise<number> {
      const { rows } = (await trx.raw(
        `WITH moved AS (
           DELETE FROM results_rollup_deltas WHERE xid < ?::xid8 RETURNING account_id, bucket, metric, key1, key2, n, value
         ), live AS (
           SELECT account_id, bucket, metric, key1, key2, sum(n) AS n, sum(value) AS value FROM moved
            WHERE ${accountExistsSql('moved.account_id')}
            GROUP BY 1, 2, 3, 4, 5
         ), minutes AS (
           INSERT INTO results_rollups_minute AS r (account_id, bucket, metric, key1, key2, n, value)
           SELECT * FROM live
           ON CONFLICT (account_id, bucket, metric, key1, key2) DO UPDATE SET n = r.n + excluded.n, value = r.value + excluded.value
         ), hours AS (
           INSERT INTO results_rollups AS r (account_id, bucket, metric, key1, key2, n, value)
           SELECT account_id, ${HOUR_OF('bucket')}, metric, key1, key2, sum(n), sum(value) FROM live GROUP BY 1, 2, 3, 4, 5
           ON CONFLICT (account_id, bucket, metric, key1, key2) DO UPDATE SET n = r.n + excluded.n, value = r.value + excluded.value
         ) SELECT count(*)::int AS n FROM moved`,
        [hi],
      )) as { rows: { n: number }[] };
      return rows[0]!.n;
    },

    async setWatermark(xid: string): Promise<void> {
      await trx('results_rollup_watermark')
        .where({ name: 'results' })
        .update({ xid: trx.raw('?::xid8', [xid]) });
    },
  };
}
