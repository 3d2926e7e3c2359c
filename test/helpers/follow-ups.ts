import { deliverEvent } from '../../src/events/outbox.js';
import type { EventDeps } from '../../src/events/event-map.js';
import { eventHandlers } from '../../workers/event-handlers.js';

/**
 * Delivers every recorded event not delivered yet, here and now, with the handlers the card-timers pool
 * registers (workers/event-handlers.ts): for a test without that pool that reads what a decision's
 * follow-ups did. Answers how many it delivered.
 */
export async function runFollowUps(deps: EventDeps): Promise<number> {
  const rows = (await deps.db('events_outbox').whereNull('done_at').orderBy('created_at').select('account_id', 'id')) as {
    account_id: string;
    id: string;
  }[];
  for (const r of rows) await deliverEvent(deps, eventHandlers(), { accountId: r.account_id, eventId: r.id });
  return rows.length;
}
