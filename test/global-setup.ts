import { configWith } from '../src/config.js';
import { createDb, migrate } from '../src/db.js';
import { preflight } from '../src/preflight.js';
import { TEMPLATE_DB, TEST_DB_PREFIX, urlFor, withAdminClient } from './helpers/db.js';

async function dropTestDatabases(): Promise<void> {
  await withAdminClient(async (c) => {
    const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${TEST_DB_PREFIX}%`]);
    for (const { datname } of rows) {
      if (datname === TEMPLATE_DB) continue;
      await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
}

/** Migrates a template database once per run; every test file clones it. */
export async function setup(): Promise<void> {
  const problems = await preflight(configWith({}));
  if (problems.length) throw new Error(problems.join('\n'));
  await dropTestDatabases();
  await withAdminClient(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${TEMPLATE_DB}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${TEMPLATE_DB}"`);
  });
  const db = createDb(urlFor(TEMPLATE_DB), 1);
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}

export async function teardown(): Promise<void> {
  await dropTestDatabases();
}
