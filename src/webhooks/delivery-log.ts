import type { Db } from '../db.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { NotFound } from '../errors.js';
import { webhooksRepository } from './webhooks.repository.js';
import type { Outcome } from './webhooks.types.js';

// A hook's delivery log as the dashboard pages through it: one outcome or all, newest first, each body
// shown as a bounded preview (the log keeps the body for the agent and for replay; a page never carries it whole).

/** Characters of a delivery's body a log entry shows; the rest stays in the log for the agent and replay. */
export const DELIVERY_PREVIEW_CHARS = 500;

/** The outcomes as the dashboard's query names them (the log's own words are the spec's: Accepted, Rate Limited, Worker Error). */
export const OUTCOME_FILTERS = ['accepted', 'rate_limited', 'worker_error'] as const;
export type OutcomeFilter = (typeof OUTCOME_FILTERS)[number];

const OUTCOME_OF: Record<OutcomeFilter, Outcome> = {
  accepted: 'Accepted',
  rate_limited: 'Rate Limited',
  worker_error: 'Worker Error',
};
const FILTER_OF = Object.fromEntries(Object.entries(OUTCOME_OF).map(([k, v]) => [v, k])) as Record<Outcome, OutcomeFilter>;

export interface DeliveryEntry {
  id: string;
  outcome: OutcomeFilter;
  receivedAt: number;
  sizeBytes: number;
  /** The body's first DELIVERY_PREVIEW_CHARS characters; null when it was not kept (a Rate Limited delivery). */
  preview: string | null;
  /** The delivery this one replays, or null. */
  replayOf: string | null;
  /** A Rate Limited entry stands for every refusal of the hook in one minute: how many, and when the last came. */
  count: number;
  lastAt: number | null;
  /** Worker Error: why the agent was not handed it. */
  error: string | null;
}

/**
 * One page of the hook's log. The hook must be of `accountId` (another account's is NotFound); the cursor is
 * signed with the hook and the filter, so a cursor of another hook or outcome is `cursor is not valid`.
 */
export async function deliveryPage(
  db: Db,
  cursorSecret: string,
  accountId: string,
  hookId: string,
  o: { outcome: OutcomeFilter | null; cursor: string | null; limit: number },
): Promise<{ items: DeliveryEntry[]; nextCursor: string | null }> {
  const repo = webhooksRepository(db);
  const hook = await repo.findHook(hookId);
  if (!hook || hook.accountId !== accountId) throw new NotFound();
  const filter = `${hookId} ${o.outcome ?? 'all'}`;
  const after = o.cursor === null ? null : decodeCursor(cursorSecret, 'hook-deliveries', accountId, filter, o.cursor);
  const rows = await repo.pageDeliveries(hookId, {
    outcome: o.outcome ? OUTCOME_OF[o.outcome] : null,
    before: after ? { at: after.at, id: after.id ?? '' } : null,
    limit: o.limit + 1,
    previewChars: DELIVERY_PREVIEW_CHARS,
  });
  const page = rows.slice(0, o.limit);
  const last = page.at(-1);
  return {
    items: page.map((d) => ({
      id: d.deliveryId,
      outcome: FILTER_OF[d.outcome],
      receivedAt: d.at,
      sizeBytes: d.bytes,
      preview: d.preview,
      replayOf: d.replayOf,
      count: d.deliveries,
      lastAt: d.lastAt,
      error: d.outcome === 'Worker Error' ? (d.error ?? 'the agent could not be woken') : null,
    })),
    nextCursor:
      rows.length > o.limit && last
        ? encodeCursor(cursorSecret, 'hook-deliveries', accountId, filter, { at: last.at, seq: 0, id: last.deliveryId })
        : null,
  };
}
