import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from './config.js';
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

/**
 * How the service reaches Postgres: `none`, directly (or through a session pooler); `transaction`, through
 * a transaction pooler such as PgBouncer's `pool_mode = transaction`, which hands each transaction any
 * server connection: then no statement is named and nothing is kept on a session (docs/decisions/stores.md,
 * "Postgres behind a pooler").
 */
export type Pooler = Config['databasePooler'];

/** knex configs (shared by a knex instance and its transactions) of pools that run through a transaction pooler. */
const behindPoolers = new WeakSet<object>();
/** Marks a pg connection of such a pool: statements on it go unnamed. */
const UNNAMED = Symbol('unnamed statements only');

export function createDb(databaseUrl: string, poolMax = 10, logger?: Logger, pooler: Pooler = 'none'): Db {
  const db = knex({
    // knex would print pool errors to the console; they belong in our log (the request answers 503).
    log: {
      warn: (m: unknown) => logger?.warn({ knex: String(m) }, 'knex warning'),
      error: (m: unknown) => logger?.error({ knex: String(m) }, 'knex error'),
      deprecate: (m: unknown) => logger?.warn({ knex: String(m) }, 'knex deprecation'),
      debug: () => {},
    },
    client: 'pg',
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: 3_000 },
    pool: {
      min: 0,
      max: poolMax,
      idleTimeoutMillis: 30_000,
      ...(pooler === 'transaction' && {
        afterCreate: (conn: Record<symbol, boolean>, done: (err: Error | null, conn: unknown) => void) => {
          conn[UNNAMED] = true;
          done(null, conn);
        },
      }),
    },
    acquireConnectionTimeout: 5_000,
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
  if (pooler === 'transaction') behindPoolers.add(db.client.config as object);
  return db;
}

/** The pool (or its transaction) runs through a transaction pooler: no session state, no named statements. */
export const behindPooler = (q: Queryable): boolean => behindPoolers.has(q.client.config as object);

/** The service's pool for this configuration. */
export const createServiceDb = (config: Config, logger?: Logger): Db =>
  createDb(config.databaseUrl, config.databasePoolMax, logger, config.databasePooler);

/**
 * Postgres past any pooler, for what needs a session of its own or the `postgres` database: creating the
 * database, migrating, LISTEN. DATABASE_DIRECT_URL, else DATABASE_URL.
 */
export const directUrl = (config: Pick<Config, 'databaseUrl' | 'databaseDirectUrl'>): string =>
  config.databaseDirectUrl ?? config.databaseUrl;

/**
 * Where this process may LISTEN, or null: a transaction pooler cannot carry a listener (the server
 * connection it LISTENed on goes to other clients), so behind one only DATABASE_DIRECT_URL will do.
 */
export const listenUrl = (config: Pick<Config, 'databaseUrl' | 'databaseDirectUrl' | 'databasePooler'>): string | null =>
  config.databasePooler === 'transaction' ? config.databaseDirectUrl : config.databaseUrl;

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
  // A connection cut between queries is an 'error' event as well as a failed query: the query's failure is the answer.
  client.on('error', () => undefined);
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

/**
 * What every role does before it starts: creates the database when missing and migrates it, both over
 * Postgres itself when DATABASE_DIRECT_URL is set (a pooler may not reach the `postgres` database),
 * else over DATABASE_URL (knex's migration lock is a row and each migration one transaction, so a
 * transaction pooler carries them too).
 */
export async function prepareDatabase(config: Config): Promise<{ created: boolean; applied: string[] }> {
  const created = await ensureDatabase(directUrl(config));
  const db = createDb(directUrl(config), 2, undefined, config.databaseDirectUrl ? 'none' : config.databasePooler);
  try {
    return { created, applied: await migrate(db) };
  } finally {
    await db.destroy();
  }
}

/** Epoch milliseconds, the spec's only time format. */
export const now = (): number => Date.now();

/** A node-postgres connection, as knex's pool hands it out. */
export interface PgConnection {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: unknown[] }>;
  __knex__disposed?: unknown;
  [UNNAMED]?: boolean;
}

interface PoolClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(conn: PgConnection): Promise<unknown>;
}

/** Where a turn statement runs: knex's pool, an open knex transaction, or a connection the caller holds. */
export type Runner = Queryable | PgConnection;

/**
 * A statement the turn path runs often: prepared once per connection, then only bound and executed.
 * Behind a transaction pooler it goes unnamed (parsed each time): the next transaction may run on a
 * server connection that never saw it, or one that has it already from another client.
 */
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
  const query = async (conn: PgConnection) =>
    (await conn.query(conn[UNNAMED] ? { text: stmt.text, values } : { name: stmt.name, text: stmt.text, values })).rows as T[];
  if (isConnection(on)) return query(on);
  const client = on.client as unknown as PoolClient;
  const conn = await client.acquireConnection();
  try {
    return await query(conn);
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
 * A named prepared statement (unnamed behind a transaction pooler) on a connection from knex's pool (or
 * the transaction's own), for the few queries on every request's path where the query builder's cost
 * shows in profiles.
 */
export function preparedQuery<T>(q: Queryable, config: { name: string; text: string; values: unknown[] }): Promise<T[]> {
  return run<T>(q, config, config.values);
}

/**
 * A prune pass of one kind of history: removes (or empties) at most `limit` rows older than `before` (epoch ms) in
 * one statement; answers how many.
 */
export type Prune = (q: Queryable, before: number, limit: number) => Promise<number>;

/**
 * One statement: at most `limit` rows of `table` matching `where` (its `?` bound to `bindings`), found and deleted by
 * `ctid` (a TID scan); a partitioned table's ctids repeat across its partitions, so it names its `key` instead.
 */
export async function deleteBatch(
  q: Queryable,
  table: string,
  where: string,
  bindings: unknown[],
  limit: number,
  key?: string,
): Promise<number> {
  const pick = key ? `(${key}) IN (SELECT ${key}` : 'ctid = ANY(ARRAY(SELECT ctid';
  const { rowCount } = (await q.raw(`DELETE FROM ${table} WHERE ${pick} FROM ${table} WHERE ${where} LIMIT ?)${key ? '' : ')'}`, [
    ...bindings,
    limit,
  ] as never[])) as { rowCount: number };
  return rowCount;
}
