import type { Knex } from 'knex';
import type { Queryable } from '../db.js';

/**
 * The account row's settings that other areas keep (the blog's base URL, who a reply stops, the mail sender, the
 * time zone): each area reads and writes its columns here, never the accounts table itself. A write answers how many
 * rows it changed (0: no such account).
 */
export function accountSettings(q: Queryable) {
  const one = <T>(id: string, column: string): Promise<T | undefined> =>
    q('accounts')
      .where({ id })
      .first(column)
      .then((row: Record<string, T> | undefined) => row?.[column]);
  return {
    exists: async (id: string): Promise<boolean> => Boolean(await q('accounts').where({ id }).first('id')),
    /** One column of the account (undefined: no such account). */
    column: one,
    /** Sets columns of the account; answers how many rows changed. */
    set: (id: string, changes: Record<string, unknown>): Promise<number> => q('accounts').where({ id }).update(changes),
    /** The accounts among `ids` whose boolean `column` is true. */
    whereTrue: (ids: string[], column: string): Promise<string[]> => q('accounts').whereIn('id', ids).andWhere(column, true).pluck('id'),
  };
}

/** Adds the account's `columns` (as `a.<column>`) to a query of another table whose account id is `accountIdColumn`. */
export const joinAccount = <Q extends Knex.QueryBuilder>(query: Q, accountIdColumn: string, columns: readonly string[]): Q =>
  query.join('accounts as a', 'a.id', accountIdColumn).select(columns.map((c) => `a.${c}`)) as Q;

/** SQL text: the account's `column` for the account id `accountIdSql` (a subquery of one value). */
export const accountColumnSql = (column: string, accountIdSql: string) =>
  `(SELECT a.${column} FROM accounts a WHERE a.id = ${accountIdSql})`;

/** SQL text: whether the account `accountIdSql` still exists. */
export const accountExistsSql = (accountIdSql: string) => `EXISTS (SELECT 1 FROM accounts a WHERE a.id = ${accountIdSql})`;
