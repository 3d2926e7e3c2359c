import type { Config } from '../config.js';
import type { Queryable } from '../db.js';
import { inboundRepository } from '../inbound/inbound.repository.js';
import { measurementRepository } from '../measurement/measurement.repository.js';
import { deleteFinishedCards } from '../review/cards/doors.js';
import { webhooksRepository } from '../webhooks/webhooks.repository.js';
import { UNFOLDED_EVENTS } from './partitions.js';

/** One kind of history with a retention: how long it is kept, and one bounded statement that removes the expired. */
export interface RetentionKind {
  name: string;
  /** How long a row of this kind is kept, ms; null: forever. */
  keepMs(config: Config): number | null;
  /** Removes (or empties) at most `limit` rows older than `before` (epoch ms) in one statement; answers how many. */
  batch(q: Queryable, before: number, limit: number): Promise<number>;
}

/**
 * One statement: at most `limit` rows of `table` matching `where` (its `?` bound to `bindings`), found and deleted by
 * `ctid` (a TID scan); a partitioned table's ctids repeat across its partitions, so it names its key instead.
 */
export async function deleteWhere(q: Queryable, table: string, where: string, bindings: unknown[], limit: number): Promise<number> {
  const key = KEYS[table];
  const pick = key ? `(${key}) IN (SELECT ${key}` : 'ctid = ANY(ARRAY(SELECT ctid';
  const { rowCount } = (await q.raw(`DELETE FROM ${table} WHERE ${pick} FROM ${table} WHERE ${where} LIMIT ?)${key ? '' : ')'}`, [
    ...bindings,
    limit,
  ] as never[])) as { rowCount: number };
  return rowCount;
}

/** The keys of the partitioned tables (src/retention/partitions.ts). */
const KEYS: Record<string, string> = { visits: 'account_id, id, at', channel_events: 'account_id, id, at' };

const rows =
  (table: string, where: string) =>
  (q: Queryable, before: number, limit: number): Promise<number> =>
    deleteWhere(q, table, where, [before], limit);

/** Events the rollup pass has folded (below its watermark; rows older than the rollups carry no xid). */
const FOLDED = `(xid IS NULL OR NOT ${UNFOLDED_EVENTS})`;

/**
 * Every kind, in the order a pass visits them. Never here, so never removed: blocklist entries, opt-outs,
 * leads and their contacts, the hourly rollups `/results` reads, accounts and their settings.
 */
export const RETENTION_KINDS: readonly RetentionKind[] = [
  { name: 'channelEvents', keepMs: (c) => c.retention.channelEventsMs, batch: rows('channel_events', `at < ? AND ${FOLDED}`) },
  // A ref's `at` is the later of its event's time and when it was recorded: it outlives its event (retention.md).
  { name: 'channelEventRefs', keepMs: (c) => c.retention.channelEventsMs, batch: rows('channel_event_refs', 'at < ?') },
  { name: 'visits', keepMs: (c) => c.retention.visitsMs, batch: rows('visits', 'at < ?') },
  {
    name: 'botVisits',
    keepMs: (c) => c.links.botVisitRetentionMs,
    batch: (q, before, limit) => measurementRepository(q).pruneBotVisits(before, limit),
  },
  {
    name: 'conversions',
    keepMs: (c) => c.retention.conversionsMs,
    batch: (q, before, limit) =>
      deleteWhere(q, 'conversions', 'aggregated_at IS NOT NULL AND occurred_at < ? AND received_at < ?', [before, before], limit),
  },
  {
    name: 'webhookDeliveries',
    keepMs: (c) => c.webhooks.deliveryRetentionMs,
    batch: (q, before, limit) => webhooksRepository(q).pruneBefore(before, limit),
  },
  {
    name: 'inboundRaw',
    keepMs: (c) => c.inbound.rawRetentionMs,
    batch: (q, before, limit) => inboundRepository(q).dropRaw(['unplaced', 'malformed', 'duplicate'], before, limit),
  },
  {
    name: 'inboundAppliedRaw',
    keepMs: (c) => c.inbound.appliedRawRetentionMs,
    batch: (q, before, limit) => inboundRepository(q).dropRaw(['applied'], before, limit),
  },
  {
    name: 'inboundMessages',
    keepMs: (c) => c.retention.inboundMessagesMs,
    batch: rows('inbound_messages', `received_at < ? AND status <> 'received' AND raw IS NULL`),
  },
  { name: 'operatorMail', keepMs: (c) => c.inbound.postmasterRetentionMs, batch: rows('operator_mail', 'received_at < ?') },
  // `/results` reads minute rollups only at the edges of windows at most 14 days back (docs/decisions/results.md).
  { name: 'minuteEventRollups', keepMs: (c) => c.retention.minuteRollupsMs, batch: rows('channel_event_rollups_minute', 'bucket < ?') },
  { name: 'minuteResultRollups', keepMs: (c) => c.retention.minuteRollupsMs, batch: rows('results_rollups_minute', 'bucket < ?') },
  { name: 'audit', keepMs: (c) => c.retention.auditMs, batch: rows('audit_log', 'at < ?') },
  {
    name: 'agentSteps',
    keepMs: (c) => c.retention.agentStepsMs,
    batch: rows('agent_turn_steps', '(account_id, turn_id) IN (SELECT account_id, id FROM agent_turns WHERE finished_at < ?)'),
  },
  // A finished turn goes with its replies and wakes (ON DELETE CASCADE): the thread keeps the newest.
  { name: 'agentThread', keepMs: (c) => c.retention.agentThreadMs, batch: rows('agent_turns', 'finished_at < ?') },
  { name: 'finishedCards', keepMs: (c) => c.retention.finishedCardsMs, batch: deleteFinishedCards },
  {
    name: 'modelCalls',
    keepMs: (c) => c.retention.modelCallsMs,
    batch: (q, before, limit) => deleteWhere(q, 'agent_model_calls', 'day < ?', [new Date(before).toISOString().slice(0, 10)], limit),
  },
];
