import type { TestProject } from 'vitest/node';
import { configWith } from '../src/config.js';
import { createDb, migrate } from '../src/db.js';
import { preflight } from '../src/preflight.js';
import { TEST_DB_PREFIX, urlFor, withAdminClient } from './helpers/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's migrated template database; every test file clones it. */
    templateDb: string;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Drops test databases of runs that are gone. Names carry the pid of the run that made them
 * (`gas_test_<pid>_…`), so two runs side by side (or a run killed mid-way) never lose each other's.
 */
async function dropDatabases(which: (pid: number) => boolean): Promise<void> {
  await withAdminClient(async (c) => {
    const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${TEST_DB_PREFIX}%`]);
    for (const { datname } of rows) {
      const pid = Number(/^gas_test_(?:tpl_)?(\d+)/.exec(datname)?.[1] ?? NaN);
      if (Number.isNaN(pid) || which(pid)) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
}

/** Migrates a template database once per run; every test file clones it. */
export async function setup(project: TestProject): Promise<void> {
  const problems = await preflight(configWith({}));
  if (problems.length) throw new Error(problems.join('\n'));
  await dropDatabases((pid) => !alive(pid));
  const template = `${TEST_DB_PREFIX}tpl_${process.pid}`;
  await withAdminClient(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${template}"`);
  });
  const db = createDb(urlFor(template), 1);
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
  project.provide('templateDb', template);
}

export async function teardown(): Promise<void> {
  await dropDatabases((pid) => pid === process.pid || !alive(pid));
}
