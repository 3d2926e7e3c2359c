import pg from 'pg';
import { inject } from 'vitest';
import { configWith } from './config.js';

export const TEST_DB_PREFIX = 'gas_test_';

export function urlFor(database: string): string {
  const url = new URL(configWith({}).databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withAdminClient<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A database name owned by this run (`gas_test_<run pid>_<file pid>_<random>`); not created. */
export function testDatabaseName(): string {
  const runPid = inject('templateDb').replace(`${TEST_DB_PREFIX}tpl_`, '');
  return `${TEST_DB_PREFIX}${runPid}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A fresh database for one test file, cloned from this run's migrated template. The name starts with
 * the run's pid (the template's), so global setup knows whose it is.
 */
export async function createTestDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const template = inject('templateDb');
  const name = testDatabaseName();
  await withAdminClient((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return {
    name,
    url: urlFor(name),
    drop: () => withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}
