import pg from 'pg';
import { testServices } from '../../src/config.js';

export const TEMPLATE_DB = 'gas_test_template';
export const TEST_DB_PREFIX = 'gas_test_';

export function urlFor(database: string): string {
  const url = new URL(testServices().databaseUrl);
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

/** A fresh database for one test file, cloned from the migrated template. */
export async function createTestDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${TEST_DB_PREFIX}${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await withAdminClient((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`));
  return {
    name,
    url: urlFor(name),
    drop: () => withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}
