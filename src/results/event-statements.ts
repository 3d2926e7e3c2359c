import type { Queryable } from '../db.js';

/**
 * Results' doors for areas that record channel events inside a statement or transaction of their own (a click's
 * visit and its event in one statement; the demo seed's marks), so those areas never name results' tables.
 */

/**
 * SQL text: the tail of one statement (after `WITH …, ` of the caller's CTEs) that records a channel event for each
 * row of the CTE `source` (columns account_id, channel, id, at, bot) on the channels in `channels` (a text[] parameter):
 * a `visit`, or a `scanner_click` for a bot, with the row's id as its ref, each only when its ref was new in
 * `channel_event_refs`, and those channels marked connected. `recordedAt` is the bigint parameter of when.
 */
export const recordVisitEventsSql = (source: string, channels: string, recordedAt: string) => `connected AS (
           INSERT INTO channel_connections (account_id, channel, connected_at)
           SELECT DISTINCT ON (account_id, channel) account_id, channel, at FROM ${source} WHERE channel = ANY(${channels})
           ON CONFLICT (account_id, channel) DO NOTHING
         ), refs AS (
           INSERT INTO channel_event_refs (account_id, channel, type, ref_id, at)
           SELECT account_id, channel, CASE WHEN bot THEN 'scanner_click' ELSE 'visit' END, id, greatest(at, ${recordedAt})
             FROM ${source} WHERE channel = ANY(${channels})
           ON CONFLICT (account_id, channel, type, ref_id) DO NOTHING
           RETURNING account_id, ref_id
         )
         INSERT INTO channel_events (account_id, channel, type, at, ref_id, recorded_at)
         SELECT account_id, channel, CASE WHEN bot THEN 'scanner_click' ELSE 'visit' END, at, id, ${recordedAt}
           FROM ${source} WHERE (account_id, id) IN (SELECT account_id, ref_id FROM refs)`;

/** Marks the account's events whose ref starts with `refPrefix` as demo figures, which `/results` leaves out. */
export async function markDemoEvents(q: Queryable, accountId: string, refPrefix: string): Promise<void> {
  await q('channel_events').where({ account_id: accountId }).andWhereLike('ref_id', `${refPrefix}%`).update({ demo: true });
}
