import type { Queryable } from '../db.js';
import { recordChannelEvents } from '../results/channel-events.js';
import { addToBlocklist } from './blocklist.service.js';

/**
 * A provider-reported unsubscribe: the address goes on the block list with source `opt_out_reply`
 * (an existing entry is upgraded, so it can never be removed) and an `email.opt_out` event is counted.
 * Idempotent with a `refId`: a repeated report changes nothing.
 */
export async function recordOptOut(
  q: Queryable,
  accountId: string,
  e: { address: string; at: number; refId?: string | null },
): Promise<{ listed: boolean }> {
  return recordOptOuts(q, accountId, [e]);
}

/** `recordOptOut` for several addresses of one account: one block-list write and one events statement. */
export async function recordOptOuts(
  q: Queryable,
  accountId: string,
  es: { address: string; at: number; refId?: string | null }[],
): Promise<{ listed: boolean }> {
  const r = await addToBlocklist(
    q,
    accountId,
    es.map((e) => e.address),
    'opt_out_reply',
    null,
  );
  await recordChannelEvents(
    q,
    es.map((e) => ({ accountId, event: { channel: 'email' as const, type: 'opt_out', at: e.at, refId: e.refId ?? null } })),
  );
  return { listed: r.invalid.length === 0 };
}
