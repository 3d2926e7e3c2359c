import { configWith } from '../src/config.js';

/** The database URL for a named database on the configured Postgres server. */
export function urlFor(database: string): string {
  const url = new URL(configWith({}).databaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
