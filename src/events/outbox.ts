import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../db.js';
import { newId } from '../ids.js';
import { eventDeliver } from '../jobs/card-timers.js';
import { enqueue, pendingJob } from '../jobs/registry.js';
import type { EventDeps, EventHandlers, EventMap, EventName } from './event-map.js';

// The events' outbox (events_outbox): an event is a row written in the transaction of the change it reports,
// queued for delivery once that transaction committed, and delivered by the card-timers pool to every handler
// registered for it, each once (its area is noted in `handled`); the maintenance sweep queues again what was not
// delivered.

const TABLE = 'events_outbox';

/** A recorded event: its account and id, the key of its row and of its delivery. */
export interface EventRef {
  accountId: string;
  eventId: string;
}

/** Records an event in the caller's transaction; answers its key, to queue once that transaction committed. */
export async function recordEvent<N extends EventName>(trx: Queryable, name: N, payload: EventMap[N]): Promise<EventRef> {
  const eventId = newId('evt');
  const { accountId } = payload;
  await trx(TABLE).insert({ account_id: accountId, id: eventId, name, payload: JSON.stringify(payload), created_at: Date.now() });
  return { accountId, eventId };
}

/**
 * Queues the delivery of events whose transaction committed. A failed enqueue is logged, not thrown: the decision
 * stands, and the maintenance sweep queues the event (`sweepEvents`). Its key is the event's, so a repeat while
 * one waits or runs adds nothing.
 */
export async function queueEvents(deps: Pick<EventDeps, 'config' | 'logger' | 'queues'>, events: readonly EventRef[]): Promise<void> {
  if (!events.length) return;
  // 0 in production; a kill test raises it to die between the commit and the queueing.
  if (deps.config.events.pauseBeforeQueueMs > 0) await sleep(deps.config.events.pauseBeforeQueueMs);
  await enqueueEvents(deps, events);
}

async function enqueueEvents(deps: Pick<EventDeps, 'logger' | 'queues'>, events: readonly EventRef[]): Promise<void> {
  for (const { accountId, eventId } of events) {
    try {
      await enqueue(deps.queues, eventDeliver, { accountId, eventId });
    } catch (err) {
      deps.logger.warn({ eventId, err: (err as Error).message }, 'event not queued; the maintenance sweep queues it');
    }
  }
}

interface OutboxRow {
  id: string;
  name: string;
  payload: unknown;
  handled: string[];
  done_at: string | null;
}

/**
 * The `event.deliver` job: runs each registered handler the row does not list as handled, noting each once it
 * finished, then marks the row done. A handler that throws leaves the row for the job's retry (or the sweep),
 * which skips the handlers already noted; a worker killed between a handler's effect and its note runs that
 * handler again, which its idempotence makes harmless.
 */
export async function deliverEvent(
  deps: EventDeps,
  handlers: EventHandlers,
  { accountId, eventId: id }: EventRef,
): Promise<{ ran: string[] } | { skipped: string }> {
  const key = { account_id: accountId, id };
  const row = (await deps.db(TABLE).where(key).first()) as OutboxRow | undefined;
  if (!row) return { skipped: 'no such event' };
  if (row.done_at !== null) return { skipped: 'already delivered' };
  const ran: string[] = [];
  for (const h of handlers.of(row.name)) {
    if (row.handled.includes(h.area)) continue;
    await h.handle(deps, row.payload as EventMap[EventName]);
    await deps
      .db(TABLE)
      .where(key)
      .whereRaw('NOT (? = ANY(handled))', [h.area])
      .update({ handled: deps.db.raw('array_append(handled, ?)', [h.area]) });
    ran.push(h.area);
  }
  await deps.db(TABLE).where(key).whereNull('done_at').update({ done_at: Date.now() });
  return { ran };
}

/** How many times the sweep queues one event again; past it the row stays undelivered for an operator (logged once). */
export const EVENT_SWEEPS = 10;

/**
 * The events' part of the maintenance sweep: queues again every event older than EVENTS_SWEEP_AFTER_MS and not yet
 * delivered (its process died between the commit and the queueing, or its job failed for good), a bounded batch
 * per pass and at most EVENT_SWEEPS times per event, and removes delivered rows older than EVENTS_KEEP_DAYS. A
 * repeat while a delivery waits adds nothing.
 */
export async function sweepEvents(deps: Pick<EventDeps, 'config' | 'logger' | 'queues' | 'db'>, now = Date.now(), limit = 500) {
  const due = (await deps
    .db(TABLE)
    .whereNull('done_at')
    .where('sweeps', '<', EVENT_SWEEPS)
    .where('created_at', '<=', now - deps.config.events.sweepAfterMs)
    .orderBy('created_at')
    .limit(limit)
    .select('account_id', 'id', 'sweeps')) as { account_id: string; id: string; sweeps: number }[];
  // Only an event no job holds counts a sweep: a delivery waiting for its pool is not a lost one.
  const queue = deps.queues.get(eventDeliver.queue);
  const lost: typeof due = [];
  for (const r of due) {
    if (!queue || !(await pendingJob(queue, eventDeliver.key({ accountId: r.account_id, eventId: r.id })))) lost.push(r);
  }
  if (lost.length) {
    const keys = lost.map((r) => [r.account_id, r.id]);
    await deps.db(TABLE).whereIn(['account_id', 'id'], keys).increment('sweeps', 1);
  }
  for (const r of lost.filter((r) => r.sweeps + 1 === EVENT_SWEEPS)) {
    deps.logger.error({ accountId: r.account_id, eventId: r.id }, `event queued by the sweep ${EVENT_SWEEPS} times; no more`);
  }
  await enqueueEvents(
    deps,
    lost.map((r) => ({ accountId: r.account_id, eventId: r.id })),
  );
  const old = deps
    .db(TABLE)
    .where('done_at', '<', now - deps.config.events.keepMs)
    .orderBy('done_at')
    .limit(limit)
    .select('account_id', 'id');
  const pruned = await deps.db(TABLE).whereIn(['account_id', 'id'], old).del();
  return { eventsQueued: lost.length, eventsPruned: pruned };
}
