import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from './logger.js';

export type Db = Knex;
export type Trx = Knex.Transaction;
/** Either the pool or an open transaction: repositories take this and never open their own. */
export type Queryable = Knex | Knex.Transaction;

// BIGINT (int8) columns hold epoch-ms values far below 2^53; read them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

const migrationsDir = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Reads migrations/ as plain modules so knex needs no TypeScript loader of its own. */
const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    const files = await readdir(migrationsDir);
    return files.filter((f) => /^\d{14}_[a-z0-9_]+\.ts$/.test(f)).sort();
  },
  getMigrationName(file) {
    return file.replace(/\.ts$/, '');
  },
  async getMigration(file) {
    return (await import(pathToFileURL(path.join(migrationsDir, file)).href)) as Knex.Migration;
  },
};

export function createDb(databaseUrl: string, poolMax = 10, logger?: Logger): Db {
  return knex({
    // knex would print pool errors to the console; they belong in our log (the request answers 503).
    log: {
      warn: (m: unknown) => logger?.warn({ knex: String(m) }, 'knex warning'),
      error: (m: unknown) => logger?.error({ knex: String(m) }, 'knex error'),
      deprecate: (m: unknown) => logger?.warn({ knex: String(m) }, 'knex deprecation'),
      debug: () => {},
    },
    client: 'pg',
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: 3_000 },
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: 5_000,
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
}

/** Runs every pending migration; safe to run from several processes at once (knex takes a lock). */
export async function migrate(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}

/** Creates the database named in the URL when it does not exist yet. Returns true when it created it. */
export async function ensureDatabase(databaseUrl: string, template?: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`database name ${name} must be letters, digits and _`);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
    } catch (err) {
      // Two processes starting together: the other one created it first.
      if ((err as { code?: string }).code !== '42P04') throw err;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

/** Epoch milliseconds, the spec's only time format. */
export const now = (): number => Date.now();

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
 * A named prepared statement on a connection from knex's pool (or the transaction's own), for the few
 * queries on every request's path where the query builder's cost shows in profiles.
 */
export function preparedQuery<T>(q: Queryable, config: { name: string; text: string; values: unknown[] }): Promise<T[]> {
  return run<T>(q, config, config.values);
}
