import type { Queryable } from '../db.js';

/**
 * Every place a sealed value is kept, with the columns that key its row (the reseal verb walks them all): a text
 * column, or one `field` of a jsonb column (a fence's sealed reply token).
 */
export const SEALED_COLUMNS: readonly { table: string; column: string; field?: string; key: readonly string[] }[] = [
  { table: 'provider_connections', column: 'key_sealed', key: ['account_id', 'kind'] },
  { table: 'dkim_keys', column: 'private_key_sealed', key: ['domain', 'selector'] },
  { table: 'shipments', column: 'details', field: 'replyTokenSealed', key: ['account_id', 'id'] },
];

export type SealedColumn = (typeof SEALED_COLUMNS)[number];

export interface SealedValue {
  /** The row's key columns, in `SealedColumn.key` order. */
  key: string[];
  sealed: string;
}

/** The sealed value's SQL expression (`?` bindings: the field name, when it is a jsonb field). */
const sealedExpr = (c: SealedColumn): [string, string[]] => (c.field ? [`"${c.column}"->>?`, [c.field]] : [`"${c.column}"`, []]);

/** Sealed values of one column, keyset-paged: at most `limit` after the row keyed `after` (null: from the start). */
export async function sealedPage(q: Queryable, c: SealedColumn, after: string[] | null, limit: number): Promise<SealedValue[]> {
  const cols = c.key.map((k) => `"${k}"`).join(', ');
  const [value, bindings] = sealedExpr(c);
  const rows = (await q(c.table)
    .select([...c.key])
    .select(q.raw(`${value} AS sealed`, bindings))
    .whereRaw(`${value} IS NOT NULL`, bindings)
    .modify((b) => {
      if (after) b.whereRaw(`(${cols}) > (${c.key.map(() => '?').join(', ')})`, after);
    })
    .orderBy([...c.key])
    .limit(limit)) as Record<string, string>[];
  return rows.map((r) => ({ key: c.key.map((k) => r[k]!), sealed: r.sealed! }));
}

/** Replaces one sealed value if it is still `was` (a value written meanwhile wins); true when replaced. */
export async function replaceSealed(q: Queryable, c: SealedColumn, v: SealedValue, now: string): Promise<boolean> {
  const where = Object.fromEntries(c.key.map((k, i) => [k, v.key[i]!]));
  const [value, bindings] = sealedExpr(c);
  const set = c.field
    ? { [c.column]: q.raw(`jsonb_set("${c.column}", ?, to_jsonb(?::text))`, [`{${c.field}}`, now]) }
    : { [c.column]: now };
  return (
    (await q(c.table)
      .where(where)
      .whereRaw(`${value} = ?`, [...bindings, v.sealed])
      .update(set)) > 0
  );
}

/** How many sealed values, all places together, are still under the database's key (`v1.`). */
export async function countUnderDatabaseKey(q: Queryable): Promise<number> {
  let n = 0;
  for (const c of SEALED_COLUMNS) {
    const [value, bindings] = sealedExpr(c);
    const [row] = await q(c.table).whereRaw(`${value} LIKE 'v1.%'`, bindings).count<{ n: string }[]>({ n: '*' });
    n += Number(row?.n ?? 0);
  }
  return n;
}
