import type { Db, Queryable } from '../db.js';
import { enqueue, type QueueSet } from '../jobs/registry.js';
import { measurementAggregate } from '../jobs/maintenance.js';
import type { Logger } from '../logger.js';
import { recordChannelEvents, type Channel } from '../results/channel-events.js';
import { isResultsChannel } from './channel-rules.js';
import { measurementRepository, type ConversionRow } from './measurement.repository.js';

/** Events per call. */
export const MAX_EVENTS = 100;
/** Events older than this are refused per event; so is one further than `MAX_FUTURE_MS` ahead. */
export const MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
export const MAX_FUTURE_MS = 5 * 60 * 1000;
/** Conversions one aggregation transaction counts, and transactions one job runs before handing on. */
export const AGGREGATE_BATCH = 500;
const BATCHES_PER_JOB = 10;

const VISIT_ID = /^vis_[0-9A-Za-z]{1,60}$/;

/** One conversion event as the API read it (its fields already checked one by one). */
export interface ConversionEvent {
  eventId: string;
  name: string;
  visitId?: string | undefined;
  occurredAt: number;
  value?: number | undefined;
  currency?: string | undefined;
  properties?: Record<string, unknown> | undefined;
}

/** Each event of a call: read, or refused by its own fields (with the reason, and the eventId when it had one). */
export type EventItem = { event: ConversionEvent } | { eventId: string | null; reason: string };

export interface EventOutcome {
  eventId: string | null;
  outcome: 'accepted' | 'duplicate' | 'invalid';
  reason?: string;
}

/**
 * Stores a call's conversion events, answering one outcome per event in request order: `invalid` (with
 * a reason) for an event outside the time window or naming a visit that is not this account's;
 * `duplicate` for an eventId this account stored before, or sent earlier in the same call; else
 * `accepted`. Accepted events are inserted in one statement (ON CONFLICT DO NOTHING), so a call
 * racing another with the same ids accepts each id once. Dedupe is permanent: (account, eventId) is the key.
 */
export async function recordConversions(
  q: Queryable,
  accountId: string,
  items: EventItem[],
  now = Date.now(),
): Promise<{ events: EventOutcome[]; accepted: number }> {
  const repo = measurementRepository(q);
  // Only what could be one of our ids is looked up (anything else is not a visit, and not worth a query).
  const visitIds = [...new Set(items.flatMap((i) => ('event' in i && i.event.visitId ? [i.event.visitId] : [])))].filter((id) =>
    VISIT_ID.test(id),
  );
  const visits = await repo.visitIdsOfAccount(accountId, visitIds);
  const seen = new Set<string>();
  const outcomes: EventOutcome[] = [];
  const rows: ConversionRow[] = [];
  for (const item of items) {
    if (!('event' in item)) {
      outcomes.push({ eventId: item.eventId, outcome: 'invalid', reason: item.reason });
      continue;
    }
    const e = item.event;
    const refuse = (reason: string) => outcomes.push({ eventId: e.eventId, outcome: 'invalid', reason });
    if (e.occurredAt < now - MAX_AGE_MS) refuse('occurredAt is more than 7 days ago');
    else if (e.occurredAt > now + MAX_FUTURE_MS) refuse('occurredAt is more than 5 minutes in the future');
    else if (e.visitId && !visits.has(e.visitId)) refuse('visitId is not a visit of this account');
    else if (seen.has(e.eventId)) outcomes.push({ eventId: e.eventId, outcome: 'duplicate' });
    else {
      seen.add(e.eventId);
      outcomes.push({ eventId: e.eventId, outcome: 'accepted' });
      rows.push({
        account_id: accountId,
        event_id: e.eventId,
        name: e.name,
        visit_id: e.visitId ?? null,
        value: e.value ?? null,
        currency: e.currency ?? null,
        properties: e.properties ?? null,
        occurred_at: e.occurredAt,
        received_at: now,
      });
    }
  }
  const inserted = await repo.insertConversions(rows);
  for (const o of outcomes) if (o.outcome === 'accepted' && !inserted.has(o.eventId!)) o.outcome = 'duplicate';
  return { events: outcomes, accepted: inserted.size };
}

/**
 * Queues the account's aggregation after its conversions were committed. A failed enqueue is logged,
 * not thrown: the events are stored, and the maintenance sweep queues accounts left unaggregated.
 */
export async function queueAggregation(deps: { queues: QueueSet; logger: Logger }, accountId: string): Promise<void> {
  try {
    await enqueue(deps.queues, measurementAggregate, { accountId }, { why: 'new' });
  } catch (err) {
    deps.logger.warn({ accountId, err: (err as Error).message }, 'conversion aggregation not queued; the sweep will');
  }
}

/**
 * Counts up to AGGREGATE_BATCH of the account's unaggregated conversions in one transaction: each is
 * attributed last touch (its visit's channel, or `direct` without one), marked aggregated, and a
 * `/results` channel gets a `conversion` event (refId the eventId, at occurredAt, amount the value).
 * Idempotent: a counted row is never selected again, and the events are keyed by eventId.
 */
export async function aggregateOnce(db: Db, accountId: string, limit = AGGREGATE_BATCH): Promise<number> {
  return db.transaction(async (trx) => {
    const repo = measurementRepository(trx);
    const rows = await repo.lockUnaggregated(accountId, limit);
    const attributed = rows.map((r) => ({ ...r, channel: r.visit_channel ?? 'direct' }));
    await repo.markAggregated(
      accountId,
      attributed.map((r) => ({ eventId: r.event_id, channel: r.channel })),
      Date.now(),
    );
    await recordChannelEvents(
      trx,
      attributed
        .filter((r) => isResultsChannel(r.channel))
        .map((r) => ({
          accountId,
          event: {
            channel: r.channel as Channel,
            type: 'conversion',
            at: Number(r.occurred_at),
            amount: r.value === null ? null : Number(r.value),
            refId: r.event_id,
          },
        })),
    );
    return rows.length;
  });
}

/**
 * One aggregation job's share: up to BATCHES_PER_JOB transactions; when rows remain after that, the
 * account is handed to a new job queued behind the others' (so one busy account cannot hold the pool).
 */
export async function aggregateAccount(deps: { db: Db; queues: QueueSet }, accountId: string): Promise<{ counted: number; more: boolean }> {
  let counted = 0;
  for (let i = 0; i < BATCHES_PER_JOB; i++) {
    const n = await aggregateOnce(deps.db, accountId);
    counted += n;
    if (n < AGGREGATE_BATCH) return { counted, more: false };
  }
  await enqueue(deps.queues, measurementAggregate, { accountId }, { why: 'more', delay: 1_000 });
  return { counted, more: true };
}

/** How long a stored conversion waits for its own job before the sweep queues its account. */
const SWEEP_GRACE_MS = 60_000;

/** The sweep's part: queues aggregation for accounts with conversions left unaggregated (a lost or failed job). */
export async function sweepConversions(deps: { db: Db; queues: QueueSet; logger: Logger }): Promise<number> {
  const accounts = await measurementRepository(deps.db).accountsUnaggregated(Date.now() - SWEEP_GRACE_MS, 500);
  for (const accountId of accounts) await queueAggregation(deps, accountId);
  return accounts.length;
}
