import type { Queryable } from '../db.js';

/** A node-postgres connection, as knex's pool hands it out. */
export interface PgConnection {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: unknown[] }>;
  __knex__disposed?: unknown;
}

interface PoolClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(conn: PgConnection): Promise<unknown>;
}

/** Where a turn statement runs: knex's pool, an open knex transaction, or a connection the caller holds. */
export type Runner = Queryable | PgConnection;

/** A statement the turn path runs often: prepared once per connection, then only bound and executed. */
export interface Statement {
  name: string;
  text: string;
}

/** knex instances and transactions are callable; a pg connection is a plain object. */
const isConnection = (r: Runner): r is PgConnection => typeof r !== 'function';

/**
 * Runs a named prepared statement. On knex's pool it borrows a connection for the one statement; in a
 * knex transaction it uses the transaction's connection (knex hands that out from `acquireConnection`),
 * so the statement belongs to the transaction.
 */
export async function run<T>(on: Runner, stmt: Statement, values: unknown[]): Promise<T[]> {
  if (isConnection(on)) return (await on.query({ name: stmt.name, text: stmt.text, values })).rows as T[];
  const client = on.client as unknown as PoolClient;
  const conn = await client.acquireConnection();
  try {
    return (await conn.query({ name: stmt.name, text: stmt.text, values })).rows as T[];
  } finally {
    await client.releaseConnection(conn);
  }
}

/**
 * Borrows one connection from knex's pool for `fn`. Calling `discard` closes it instead of returning
 * it, for a connection that might still hold session state (an advisory lock).
 */
export async function withConnection<T>(db: Queryable, fn: (conn: PgConnection, discard: () => void) => Promise<T>): Promise<T> {
  const client = db.client as unknown as PoolClient;
  const conn = await client.acquireConnection();
  try {
    return await fn(conn, () => {
      // knex's pool validates on the next acquire and destroys a connection marked disposed.
      conn.__knex__disposed ??= 'closed: an advisory lock may still be held';
    });
  } finally {
    await client.releaseConnection(conn);
  }
}

/**
 * A select-list item that makes the statement's own (implicit) transaction commit without waiting for
 * the WAL flush: `SET LOCAL synchronous_commit = off` for that statement only (the setting is read at
 * commit, and a local setting ends with the transaction). Used for a running turn's bookkeeping (the
 * claim, reply bubbles); the next synchronous commit (the turn's finish, any tool's write) flushes
 * everything before it. A Postgres crash can lose only such a tail: a running turn then reads as queued
 * again, with nothing of it kept, and runs again; no finished answer is ever lost.
 */
export const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true)`;
