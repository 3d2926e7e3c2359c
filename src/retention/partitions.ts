import type { Queryable } from '../db.js';
import { VISITS_PARTITIONS } from '../measurement/retention.js';
import { CHANNEL_EVENTS_PARTITIONS } from '../results/retention.js';

/**
 * Tables partitioned by month on their time column (epoch ms, UTC months), each with the retention kind that says
 * when a month goes: `<table>_pYYYY_MM` for each month, and `<table>_pdefault` for any row outside them (a time far
 * in the past or future), which retention trims by rows. `held`: rows that keep their month however old it is.
 */
export const PARTITIONED: readonly { table: string; kind: string; held?: string }[] = [
  { table: VISITS_PARTITIONS.table, kind: 'visits' },
  // An event recorded late with an old time is counted into the rollups before its month goes.
  { table: CHANNEL_EVENTS_PARTITIONS.table, kind: 'channelEvents', held: CHANNEL_EVENTS_PARTITIONS.held },
];

/** The month partitions made ahead of the current one. */
export const MONTHS_AHEAD = 2;

/** A month partition: its name and the range [start, end) of epoch ms it holds. */
export interface Month {
  name: string;
  start: number;
  end: number;
}

const monthStart = (year: number, month: number) => Date.UTC(year, month, 1);
const nameOf = (table: string, start: number) => {
  const d = new Date(start);
  return `${table}_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

/** The months from the one holding `from` to the one holding `to`: each partition's name and [start, end). */
export function monthsBetween(table: string, from: number, to: number): Month[] {
  const out = [];
  const f = new Date(from);
  for (let y = f.getUTCFullYear(), m = f.getUTCMonth(); monthStart(y, m) <= to; m++) {
    const start = monthStart(y, m);
    out.push({ name: nameOf(table, start), start, end: monthStart(y, m + 1) });
  }
  return out;
}

/** The table's month partitions with their ranges, read from the catalog. */
async function partitionsOf(q: Queryable, table: string): Promise<Month[]> {
  const { rows } = (await q.raw(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = ?::regclass`,
    [table],
  )) as { rows: { name: string; bound: string }[] };
  return rows.flatMap((r) => {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
    return m ? [{ name: r.name, start: Number(m[1]), end: Number(m[2]) }] : [];
  });
}

/** The month partitions from the one holding `now` to MONTHS_AHEAD after it that do not exist yet. */
export async function missingAhead(q: Queryable, table: string, now: number): Promise<Month[]> {
  const have = new Set((await partitionsOf(q, table)).map((p) => p.name));
  const d = new Date(now);
  return monthsBetween(table, now, monthStart(d.getUTCFullYear(), d.getUTCMonth() + MONTHS_AHEAD)).filter((m) => !have.has(m.name));
}

/**
 * Makes one month partition. Postgres checks the default partition holds no row of that month first (a row with
 * a time far ahead, put there before its month existed): then it refuses, and the month stays in the default one.
 */
export async function makePartition(q: Queryable, table: string, m: Month): Promise<void> {
  await q.raw(`CREATE TABLE ${m.name} PARTITION OF ${table} FOR VALUES FROM (${m.start}) TO (${m.end})`);
}

/** The month partitions whose every row is older than `before` (their range ends at or before it). */
export async function expiredPartitions(q: Queryable, table: string, before: number): Promise<Month[]> {
  return (await partitionsOf(q, table)).filter((p) => p.end <= before);
}

/**
 * Drops one partition of `table` whole; answers false, dropping nothing, while it holds a row matching `held`. The
 * table's lock (which the drop takes anyway) is taken first, so no writer adds such a row between the look and the drop.
 */
export async function dropPartition(q: Queryable, table: string, m: Month, held?: string): Promise<boolean> {
  if (held) {
    await q.raw(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const { rows } = (await q.raw(`SELECT EXISTS (SELECT 1 FROM ${m.name} WHERE ${held}) AS held`)) as { rows: { held: boolean }[] };
    if (rows[0]!.held) return false;
  }
  await q.raw(`DROP TABLE ${m.name}`);
  return true;
}
