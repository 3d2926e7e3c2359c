import { getAccount } from '../accounts/accounts.service.js';
import type { Queryable } from '../db.js';
import { NotFound, Rejected, Unsubscribed } from '../errors.js';
import { newId } from '../ids.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { blocklistRepository, type BlockEntry, type BlockSource } from './blocklist.repository.js';
import { domainAndParents, normaliseBlockValue, type BlockKind } from './normalise.js';

export { BLOCK_SOURCES, type BlockEntry, type BlockSource } from './blocklist.repository.js';

/** Entries per add call (spec 8.3). */
export const MAX_ADD = 500;

/**
 * Adds values to the account's block list after normalising them. Idempotent: a value already listed
 * (in any spelling) counts as `existing` and keeps its entry, except that an opt-out upgrades an
 * existing entry to source `opt_out_reply` so it can no longer be removed. Values that are not a
 * domain, an email or a profile URL come back in `invalid`, as given, once each.
 */
export async function addToBlocklist(
  q: Queryable,
  accountId: string,
  values: Array<string | { value: string; reason?: string | null }>,
  source: BlockSource,
  addedBy: string | null,
): Promise<{ added: number; existing: number; invalid: string[] }> {
  const invalid: string[] = [];
  const wanted = new Map<string, { kind: BlockKind; reason: string | null }>();
  let repeats = 0;
  for (const item of values) {
    const raw = typeof item === 'string' ? item : item.value;
    const reason = typeof item === 'string' ? null : item.reason?.trim() || null;
    const read = normaliseBlockValue(raw);
    if (!read) {
      if (!invalid.includes(raw)) invalid.push(raw);
      continue;
    }
    if (wanted.has(read.value)) repeats++;
    else wanted.set(read.value, { kind: read.kind, reason });
  }
  if (!wanted.size) return { added: 0, existing: repeats, invalid };
  const repo = blocklistRepository(q);
  const entries = [...wanted].map(([value, { kind, reason }]) => ({ id: newId('blk'), kind, value, reason, source, addedBy }));
  const added = await repo.insertMissing(accountId, entries, Date.now());
  if (source === 'opt_out_reply' && added < entries.length) await repo.markOptedOut(accountId, [...wanted.keys()]);
  return { added, existing: entries.length - added + repeats, invalid };
}

/**
 * True when contacting `value` is forbidden: the value itself is listed, or (for an email or a domain)
 * its domain or any parent domain is. A value that cannot be read is not blocked (nothing can reach it).
 */
export async function isBlocked(q: Queryable, accountId: string, value: string): Promise<boolean> {
  const read = normaliseBlockValue(value);
  if (!read) return false;
  const candidates = [read.value];
  if (read.kind === 'email') candidates.push(...domainAndParents(read.value.slice(read.value.lastIndexOf('@') + 1)));
  if (read.kind === 'domain') candidates.push(...domainAndParents(read.value).slice(1));
  return blocklistRepository(q).anyListed(accountId, candidates);
}

/** The values `isBlocked` would answer true for, among `values` (normalised values; one query for the batch: the import). */
export async function blockedAmong(q: Queryable, accountId: string, values: string[]): Promise<Set<string>> {
  const candidates = new Map<string, string[]>();
  for (const value of values) {
    const read = normaliseBlockValue(value);
    if (!read) continue;
    const keys = [read.value];
    if (read.kind === 'email') keys.push(...domainAndParents(read.value.slice(read.value.lastIndexOf('@') + 1)));
    if (read.kind === 'domain') keys.push(...domainAndParents(read.value).slice(1));
    candidates.set(value, keys);
  }
  const listed = await blocklistRepository(q).listedAmong(accountId, [...new Set([...candidates.values()].flat())]);
  return new Set([...candidates].filter(([, keys]) => keys.some((k) => listed.has(k))).map(([value]) => value));
}

/** For the places that contact someone (drafting a card, sending): 409 `rejected` when `value` is blocked. */
export async function refuseIfBlocked(q: Queryable, accountId: string, value: string): Promise<void> {
  if (await isBlocked(q, accountId, value)) throw new Rejected(`${value} is on the block list; nothing was sent`);
}

/** One newest-first page of the block list; the cursor is signed like the leads cursor. */
export async function listBlocklist(
  q: Queryable,
  accountId: string,
  opts: { limit: number; cursor: string | null; cursorSecret: string },
): Promise<{ entries: BlockEntry[]; nextCursor: string | null }> {
  const after = opts.cursor === null ? null : decodeCursor(opts.cursorSecret, 'blocklist', accountId, null, opts.cursor);
  const rows = await blocklistRepository(q).page(accountId, after, opts.limit + 1);
  const page = rows.slice(0, opts.limit);
  const last = page.at(-1);
  const more = rows.length > opts.limit && last;
  return {
    entries: page.map((r) => r.entry),
    nextCursor: more ? encodeCursor(opts.cursorSecret, 'blocklist', accountId, null, { at: last.at, seq: last.seq }) : null,
  };
}

/**
 * Removes one entry (admin only; the API has no removal). An opt-out stays: 409 with the spec's
 * `this address unsubscribed and cannot be unblocked`. NotFound when the value is not listed.
 */
export async function removeFromBlocklist(q: Queryable, accountId: string, value: string): Promise<BlockEntry> {
  await getAccount(q, accountId);
  const read = normaliseBlockValue(value);
  if (!read) throw new NotFound();
  const repo = blocklistRepository(q);
  const entry = await repo.lockByValue(accountId, read.value);
  if (!entry) throw new NotFound();
  if (entry.source === 'opt_out_reply') throw new Unsubscribed();
  await repo.delete(entry.id);
  return entry;
}
