import type { Queryable } from '../db.js';
import { recordChannelEvent } from '../results/channel-events.js';
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
  const r = await addToBlocklist(q, accountId, [e.address], 'opt_out_reply', null);
  await recordChannelEvent(q, accountId, { channel: 'email', type: 'opt_out', at: e.at, refId: e.refId ?? null });
  return { listed: r.invalid.length === 0 };
}
