import type { Queryable } from '../db.js';
import { inSpans, type WindowSplit } from './rollup-window.js';
import { UNFOLDED } from './rollups.repository.js';

export interface EventRow {
  account_id: string;
  channel: string;
  type: string;
  at: number;
  decided_by: string | null;
  amount: number | null;
  ref_id: string | null;
  recorded_at: number;
}

/** Events grouped for the scoreboard; `current` is true for the window, false for the baseline. */
export interface GroupRow {
  channel: string;
  type: string;
  decided_by: string | null;
  current: boolean;
  n: number;
  total: number | null;
  with_amount: number;
}

/** Events grouped per bucket of a series (GET /dashboard/api/results/series): `bucket` is the bucket's start. */
export interface BucketRow extends Omit<GroupRow, 'current'> {
  bucket: number;
}

/** Conversion value summed per channel and currency; `current` as in GroupRow. */
export interface ValueRow {
  channel: string;
  currency: string;
  current: boolean;
  /** How many conversions the total sums. */
  n: number;
  total: number;
}

/** One EventRow's placeholders in a VALUES list, typed (a column of NULLs only would otherwise have none). */
const EVENT_VALUES = '?::text, ?::text, ?::text, ?::bigint, ?::text, ?::float8, ?::text, ?::bigint';

export function resultsRepository(q: Queryable) {
  return {
    /**
     * Records events and marks their channels connected, in one statement; an event with a ref_id whose
     * (account, channel, type, ref_id) was recorded before (or earlier in `rows`) is ignored. The dedupe is the
     * primary key of `channel_event_refs` (channel_events is partitioned by time, so a key of its own would hold `at`):
     * the refs go in first, and an event with a ref only when its ref was new. Answers how many events were new.
     */
    async insertEvents(rows: EventRow[]): Promise<number> {
      if (!rows.length) return 0;
      const connections = [...new Map(rows.map((r) => [`${r.account_id} ${r.channel}`, r])).values()];
      const { rows: inserted } = await q.raw<{ rows: unknown[] }>(
        `WITH connected AS (
           INSERT INTO channel_connections (account_id, channel, connected_at)
           VALUES ${connections.map(() => '(?, ?, ?::bigint)').join(', ')}
           ON CONFLICT (account_id, channel) DO NOTHING
         ), r AS (
           SELECT v.*, row_number() OVER (PARTITION BY account_id, channel, type, ref_id ORDER BY ord) AS nth
             FROM (VALUES ${rows.map((_, i) => `(${i}, ${EVENT_VALUES})`).join(', ')})
               AS v(ord, account_id, channel, type, at, decided_by, amount, ref_id, recorded_at)
         ), refs AS (
           INSERT INTO channel_event_refs (account_id, channel, type, ref_id, at)
           SELECT account_id, channel, type, ref_id, greatest(at, recorded_at) FROM r WHERE ref_id IS NOT NULL AND nth = 1
           ON CONFLICT (account_id, channel, type, ref_id) DO NOTHING
           RETURNING account_id, channel, type, ref_id
         )
         INSERT INTO channel_events (account_id, channel, type, at, decided_by, amount, ref_id, recorded_at)
         SELECT account_id, channel, type, at, decided_by, amount, ref_id, recorded_at FROM r
          WHERE ref_id IS NULL OR (nth = 1 AND (account_id, channel, type, ref_id) IN (SELECT * FROM refs))
          ORDER BY ord
         RETURNING 1`,
        [
          ...connections.flatMap((r) => [r.account_id, r.channel, r.at]),
          ...rows.flatMap((r) => [r.account_id, r.channel, r.type, r.at, r.decided_by, r.amount, r.ref_id, r.recorded_at]),
        ],
      );
      return inserted.length;
    },

    /** The refIds among `refIds` the account already has an event of this channel and type for. */
    async countedRefs(accountId: string, channel: string, type: string, refIds: string[]): Promise<Set<string>> {
      if (!refIds.length) return new Set();
      const rows = (await q('channel_event_refs')
        .where({ account_id: accountId, channel, type })
        .whereIn('ref_id', refIds)
        .select('ref_id')) as { ref_id: string }[];
      return new Set(rows.map((r) => r.ref_id));
    },

    async connect(accountId: string, channel: string, at: number): Promise<void> {
      await q('channel_connections')
        .insert({ account_id: accountId, channel, connected_at: at })
        .onConflict(['account_id', 'channel'])
        .ignore();
    },

    async disconnect(accountId: string, channel: string): Promise<void> {
      await q('channel_connections').where({ account_id: accountId, channel }).del();
    },

    async connected(accountId: string): Promise<string[]> {
      return q('channel_connections').where({ account_id: accountId }).pluck('channel');
    },

    /**
     * Attributed conversion value per (channel, currency) from the rollups, split at `since`: `split.rolled` and
     * `split.minutes` from the hourly and minute rollups and the deltas not folded yet (`split.raw` is counted from
     * measurement's conversions: src/measurement/conversions.repository.ts). `n`: how many conversions each sums.
     */
    async rolledConversionValues(accountId: string, since: number, split: WindowSplit, watermark: string): Promise<ValueRow[]> {
      const rolled = inSpans('bucket', split.rolled);
      const minutes = inSpans('bucket', split.minutes);
      const tail = inSpans('bucket', [...split.rolled, ...split.minutes]);
      const { rows } = (await q.raw(
        `SELECT channel, currency, current, sum(n)::int AS n, sum(value)::text AS total FROM (
           SELECT key1 AS channel, key2 AS currency, bucket >= ? AS current, n, value FROM results_rollups
            WHERE account_id = ? AND metric = 'conversion_value' AND ${rolled.sql}
           UNION ALL
           SELECT key1, key2, bucket >= ?, n, value FROM results_rollups_minute
            WHERE account_id = ? AND metric = 'conversion_value' AND ${minutes.sql}
           UNION ALL
           SELECT key1, key2, bucket >= ?, n, value FROM results_rollup_deltas
            WHERE account_id = ? AND metric = 'conversion_value' AND ${UNFOLDED} AND ${tail.sql}
         ) x GROUP BY 1, 2, 3`,
        [
          ...[since, accountId, ...rolled.bindings, since, accountId, ...minutes.bindings],
          ...[since, accountId, watermark, ...tail.bindings],
        ],
      )) as { rows: { channel: string; currency: string; current: boolean; n: number; total: string | null }[] };
      return rows.map((r) => ({ ...r, total: Number(r.total ?? 0) }));
    },

    /**
     * Counts and amount sums per (channel, type, decider), split at `since`: `split.raw` counted from
     * `channel_events`, `split.rolled` and `split.minutes` from the hourly and minute rollups and the events not
     * folded yet.
     */
    async tally(accountId: string, since: number, split: WindowSplit, watermark: string): Promise<GroupRow[]> {
      const raw = inSpans('at', split.raw);
      const rolled = inSpans('bucket', split.rolled);
      const minutes = inSpans('bucket', split.minutes);
      const tail = inSpans('at', [...split.rolled, ...split.minutes]);
      // Rows `seed demo` wrote are demo data, not the account's figures (never folded either).
      const { rows } = (await q.raw(
        `SELECT channel, type, nullif(decided_by, '') AS decided_by, current,
                sum(n)::int AS n, sum(total) AS total, sum(with_amount)::int AS with_amount FROM (
           SELECT channel, type, coalesce(decided_by, '') AS decided_by, at >= ? AS current, 1 AS n, amount AS total,
                  (amount IS NOT NULL)::int AS with_amount
             FROM channel_events WHERE account_id = ? AND NOT demo AND ${raw.sql}
           UNION ALL
           SELECT channel, type, decided_by, bucket >= ?, n, total, with_amount
             FROM channel_event_rollups WHERE account_id = ? AND ${rolled.sql}
           UNION ALL
           SELECT channel, type, decided_by, bucket >= ?, n, total, with_amount
             FROM channel_event_rollups_minute WHERE account_id = ? AND ${minutes.sql}
           UNION ALL
           SELECT channel, type, coalesce(decided_by, ''), at >= ?, 1, amount, (amount IS NOT NULL)::int
             FROM channel_events WHERE account_id = ? AND NOT demo AND ${UNFOLDED} AND ${tail.sql}
         ) x GROUP BY 1, 2, 3, 4`,
        [
          ...[since, accountId, ...raw.bindings, since, accountId, ...rolled.bindings, since, accountId, ...minutes.bindings],
          ...[since, accountId, watermark, ...tail.bindings],
        ],
      )) as { rows: GroupRow[] };
      return rows;
    },

    /**
     * Counts and amount sums per (bucket, channel, type, decider) over [from, to), both on whole hours, with buckets of
     * `step` ms (an hour or a day, a whole number of hours) starting at `from`: whole hours from the hourly rollups (kept
     * for good) plus the events not folded yet, read in one statement so each event counts once.
     */
    async bucketTally(accountId: string, from: number, to: number, step: number, watermark: string): Promise<BucketRow[]> {
      const bucketOf = (col: string) => `(? + ((${col} - ?) / ?) * ?)::float8`;
      const b = [from, from, step, step];
      const { rows } = (await q.raw(
        `SELECT bucket, channel, type, nullif(decided_by, '') AS decided_by,
                sum(n)::int AS n, sum(total) AS total, sum(with_amount)::int AS with_amount FROM (
           SELECT ${bucketOf('bucket')} AS bucket, channel, type, decided_by, n, total, with_amount
             FROM channel_event_rollups WHERE account_id = ? AND bucket >= ? AND bucket < ?
           UNION ALL
           SELECT ${bucketOf('at')}, channel, type, coalesce(decided_by, ''), 1, amount, (amount IS NOT NULL)::int
             FROM channel_events WHERE account_id = ? AND NOT demo AND ${UNFOLDED} AND at >= ? AND at < ?
         ) x GROUP BY 1, 2, 3, 4 ORDER BY 1`,
        [...b, accountId, from, to, ...b, accountId, watermark, from, to],
      )) as { rows: BucketRow[] };
      return rows;
    },
  };
}
