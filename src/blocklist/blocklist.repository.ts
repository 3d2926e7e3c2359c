import type { Queryable } from '../db.js';
import type { BlockKind } from './normalise.js';

export const BLOCK_SOURCES = ['customer_import', 'customer', 'agent', 'opt_out_reply', 'api'] as const;
export type BlockSource = (typeof BLOCK_SOURCES)[number];

export interface BlockEntry {
  id: string;
  kind: BlockKind;
  value: string;
  reason: string | null;
  source: BlockSource;
  addedBy: string | null;
  addedAt: number;
}

interface EntryRow {
  id: string;
  account_id: string;
  seq: number;
  kind: BlockKind;
  value: string;
  reason: string | null;
  source: BlockSource;
  added_by: string | null;
  added_at: number;
}

const toEntry = (r: EntryRow): BlockEntry => ({
  id: r.id,
  kind: r.kind,
  value: r.value,
  reason: r.reason,
  source: r.source,
  addedBy: r.added_by,
  addedAt: r.added_at,
});

export function blocklistRepository(q: Queryable) {
  return {
    /** Inserts the entries whose value is not listed yet; returns how many it inserted. */
    async insertMissing(accountId: string, entries: Array<Omit<BlockEntry, 'addedAt'>>, at: number): Promise<number> {
      // One order for every caller, so two overlapping adds wait for each other instead of deadlocking.
      const sorted = [...entries].sort((x, y) => (x.value < y.value ? -1 : x.value > y.value ? 1 : 0));
      const rows = sorted.map((e) => ({
        id: e.id,
        account_id: accountId,
        kind: e.kind,
        value: e.value,
        reason: e.reason,
        source: e.source,
        added_by: e.addedBy,
        added_at: at,
      }));
      const inserted = await q('blocklist_entries').insert(rows).onConflict(['account_id', 'value']).ignore().returning('id');
      return inserted.length;
    },

    /** Marks listed values as opt-outs (which can never be removed). */
    async markOptedOut(accountId: string, values: string[]): Promise<void> {
      await q('blocklist_entries')
        .where({ account_id: accountId })
        .whereIn('value', values)
        .whereNot({ source: 'opt_out_reply' })
        .update({ source: 'opt_out_reply' });
    },

    /** The values of `values` that are listed (one statement, for a batch). */
    async listedAmong(accountId: string, values: string[]): Promise<Set<string>> {
      if (!values.length) return new Set();
      const rows: { value: string }[] = await q('blocklist_entries')
        .where({ account_id: accountId })
        .whereIn('value', values)
        .select('value');
      return new Set(rows.map((r) => r.value));
    },

    async anyListed(accountId: string, values: string[]): Promise<boolean> {
      const hit = await q('blocklist_entries').where({ account_id: accountId }).whereIn('value', values).first('id');
      return hit !== undefined;
    },

    /** Newest first (ties by insertion order), strictly after `after`, plus the position of each row. */
    async page(
      accountId: string,
      after: { at: number; seq: number } | null,
      limit: number,
    ): Promise<Array<{ entry: BlockEntry; at: number; seq: number }>> {
      const query = q<EntryRow>('blocklist_entries').where({ account_id: accountId });
      if (after) query.andWhereRaw('(added_at, seq) < (?, ?)', [after.at, after.seq]);
      const rows = await query
        .orderBy([
          { column: 'added_at', order: 'desc' },
          { column: 'seq', order: 'desc' },
        ])
        .limit(limit);
      return rows.map((r) => ({ entry: toEntry(r), at: r.added_at, seq: r.seq }));
    },

    async lockByValue(accountId: string, value: string): Promise<BlockEntry | undefined> {
      const row = await q<EntryRow>('blocklist_entries').where({ account_id: accountId, value }).forUpdate().first();
      return row ? toEntry(row) : undefined;
    },

    async delete(id: string): Promise<void> {
      await q('blocklist_entries').where({ id }).del();
    },
  };
}
