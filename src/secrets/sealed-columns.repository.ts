import type { Queryable } from '../db.js';

/** Every column holding a sealed value, with the columns that key its row (the reseal verb walks them all). */
export const SEALED_COLUMNS = [
  { table: 'provider_connections', column: 'key_sealed', key: ['account_id', 'kind'] },
  { table: 'dkim_keys', column: 'private_key_sealed', key: ['domain', 'selector'] },
] as const;

export type SealedColumn = (typeof SEALED_COLUMNS)[number];

export interface SealedValue {
  /** The row's key columns, in `SealedColumn.key` order. */
  key: string[];
  sealed: string;
}

/** Sealed values of one column, keyset-paged: at most `limit` after the row keyed `after` (null: from the start). */
export async function sealedPage(q: Queryable, c: SealedColumn, after: string[] | null, limit: number): Promise<SealedValue[]> {
  const cols = c.key.map((k) => `"${k}"`).join(', ');
  const rows = (await q(c.table)
    .select([...c.key, c.column])
    .modify((b) => {
      if (after) b.whereRaw(`(${cols}) > (${c.key.map(() => '?').join(', ')})`, after);
    })
    .orderBy([...c.key])
    .limit(limit)) as Record<string, string>[];
  return rows.map((r) => ({ key: c.key.map((k) => r[k]!), sealed: r[c.column]! }));
}

/** Replaces one sealed value if it is still `was` (a value written meanwhile wins); true when replaced. */
export async function replaceSealed(q: Queryable, c: SealedColumn, v: SealedValue, now: string): Promise<boolean> {
  const where = Object.fromEntries(c.key.map((k, i) => [k, v.key[i]!]));
  return (
    (await q(c.table)
      .where({ ...where, [c.column]: v.sealed })
      .update({ [c.column]: now })) > 0
  );
}

/** How many values of every sealed column are still under the database's key (`v1.`). */
export async function countUnderDatabaseKey(q: Queryable): Promise<number> {
  let n = 0;
  for (const c of SEALED_COLUMNS) {
    const [row] = await q(c.table).where(c.column, 'like', 'v1.%').count<{ n: string }[]>({ n: '*' });
    n += Number(row?.n ?? 0);
  }
  return n;
}
