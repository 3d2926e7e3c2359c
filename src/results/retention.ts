import { deleteBatch, type Prune } from '../db.js';

/** Channel events the rollup pass has not folded yet (its watermark; rows older than the rollups carry no xid). */
export const UNFOLDED_EVENTS = `xid >= (SELECT xid FROM results_rollup_watermark WHERE name = 'results')`;

/** Events the rollup pass has folded (below its watermark; rows older than the rollups carry no xid). */
const FOLDED = `(xid IS NULL OR NOT ${UNFOLDED_EVENTS})`;

/** channel_events is partitioned by month on `at`; `held`: rows that keep their month however old it is (not folded yet). */
export const CHANNEL_EVENTS_PARTITIONS = { table: 'channel_events', key: 'account_id, id, at', held: UNFOLDED_EVENTS } as const;

/** What retention removes of results' history (docs/decisions/retention.md): folded events, refs, minute rollups. */
export const resultsPrunes = {
  channelEvents: ((q, before, limit) =>
    deleteBatch(q, 'channel_events', `at < ? AND ${FOLDED}`, [before], limit, CHANNEL_EVENTS_PARTITIONS.key)) as Prune,
  channelEventRefs: ((q, before, limit) => deleteBatch(q, 'channel_event_refs', 'at < ?', [before], limit)) as Prune,
  minuteEventRollups: ((q, before, limit) => deleteBatch(q, 'channel_event_rollups_minute', 'bucket < ?', [before], limit)) as Prune,
  minuteResultRollups: ((q, before, limit) => deleteBatch(q, 'results_rollups_minute', 'bucket < ?', [before], limit)) as Prune,
};
