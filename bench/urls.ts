import pg from 'pg';
import { configWith } from '../test/helpers/config.js';

/** The scratch database a benchmark run drops and re-creates. */
export const BENCH_DATABASE = process.env.BENCH_DATABASE ?? 'growth_agent_bench';

/** The database URL for a named database on the configured Postgres server. */
export function urlFor(database: string): string {
  const url = new URL(configWith({}).databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Drops and re-creates a benchmark database, so every run starts from the current migrations. */
export async function freshDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: urlFor('postgres') });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}
