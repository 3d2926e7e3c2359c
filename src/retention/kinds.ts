import { agentPrunes } from '../agent/core/retention.js';
import { pruneAudit } from '../audit/retention.js';
import type { Config } from '../config.js';
import type { Queryable } from '../db.js';
import { inboundRepository } from '../inbound/inbound.repository.js';
import { inboundPrunes } from '../inbound/retention.js';
import { leadsPrunes } from '../leads/retention.js';
import { measurementRepository } from '../measurement/measurement.repository.js';
import { measurementPrunes } from '../measurement/retention.js';
import { resultsPrunes } from '../results/retention.js';
import { deleteFinishedCards } from '../review/cards/doors.js';
import { webhooksRepository } from '../webhooks/webhooks.repository.js';

/** One kind of history with a retention: how long it is kept, and one bounded statement that removes the expired. */
export interface RetentionKind {
  name: string;
  /** How long a row of this kind is kept, ms; null: forever. */
  keepMs(config: Config): number | null;
  /** Removes (or empties) at most `limit` rows older than `before` (epoch ms) in one statement; answers how many. */
  batch(q: Queryable, before: number, limit: number): Promise<number>;
}

/**
 * Every kind, in the order a pass visits them; each removes through its owner area's prune (a table is named only by
 * the area that owns it). Never here, so never removed: blocklist entries, opt-outs,
 * leads and their contacts, the hourly rollups `/results` reads, accounts and their settings.
 */
export const RETENTION_KINDS: readonly RetentionKind[] = [
  { name: 'channelEvents', keepMs: (c) => c.retention.channelEventsMs, batch: resultsPrunes.channelEvents },
  // A ref's `at` is the later of its event's time and when it was recorded: it outlives its event (retention.md).
  { name: 'channelEventRefs', keepMs: (c) => c.retention.channelEventsMs, batch: resultsPrunes.channelEventRefs },
  { name: 'visits', keepMs: (c) => c.retention.visitsMs, batch: measurementPrunes.visits },
  {
    name: 'botVisits',
    keepMs: (c) => c.links.botVisitRetentionMs,
    batch: (q, before, limit) => measurementRepository(q).pruneBotVisits(before, limit),
  },
  {
    name: 'conversions',
    keepMs: (c) => c.retention.conversionsMs,
    batch: measurementPrunes.conversions,
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
    batch: inboundPrunes.inboundMessages,
  },
  { name: 'leadImports', keepMs: (c) => c.retention.leadImportsMs, batch: leadsPrunes.leadImports },
  { name: 'operatorMail', keepMs: (c) => c.inbound.postmasterRetentionMs, batch: inboundPrunes.operatorMail },
  // `/results` reads minute rollups only at the edges of windows at most 14 days back (docs/decisions/results.md).
  { name: 'minuteEventRollups', keepMs: (c) => c.retention.minuteRollupsMs, batch: resultsPrunes.minuteEventRollups },
  { name: 'minuteResultRollups', keepMs: (c) => c.retention.minuteRollupsMs, batch: resultsPrunes.minuteResultRollups },
  { name: 'audit', keepMs: (c) => c.retention.auditMs, batch: pruneAudit },
  {
    name: 'agentSteps',
    keepMs: (c) => c.retention.agentStepsMs,
    batch: agentPrunes.agentSteps,
  },
  // A finished turn goes with its replies and wakes (ON DELETE CASCADE): the thread keeps the newest.
  { name: 'agentThread', keepMs: (c) => c.retention.agentThreadMs, batch: agentPrunes.agentThread },
  { name: 'finishedCards', keepMs: (c) => c.retention.finishedCardsMs, batch: deleteFinishedCards },
  {
    name: 'modelCalls',
    keepMs: (c) => c.retention.modelCallsMs,
    batch: agentPrunes.modelCalls,
  },
];
