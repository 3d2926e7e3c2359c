import type { TestProject } from 'vitest/node';
import { configWith } from './helpers/config.js';
import { createDb, migrate } from '../src/db.js';
import { preflight } from '../src/preflight.js';
import { TEST_DB_PREFIX, urlFor, withAdminClient } from './helpers/db.js';
import { startPgbouncer, type Pgbouncer } from './helpers/pgbouncer.js';
import { cleanLeftoverClusters, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';
import { alive } from './helpers/processes.js';
import { ensureWebBuilt } from '../scripts/build-web.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's migrated template database; every test file clones it. */
    templateDb: string;
    /** This run's Redis Cluster (REDIS_CLUSTER_NODES form); the cluster variants of the Redis tests run on it. */
    redisClusterNodes: string;
    /**
     * Only in the `pgbouncer` project: the port of this run's PgBouncer (transaction pooling), which
     * the project's test files reach their databases through, with DATABASE_POOLER=transaction.
     */
    pgbouncerPort?: number;
  }
}

/** The project whose files run through PgBouncer (vitest.config.ts). */
export const PGBOUNCER_PROJECT = 'pgbouncer';

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

/**
 * What one run sets up once, however many projects (vitest.config.ts) run this file: vitest runs a
 * project's global setup for each project in the run, in this one process, and every teardown after
 * the last file. Kept on globalThis, which the projects' module runners share.
 */
interface RunWorld {
  template: Promise<string>;
  cluster: Promise<TestCluster>;
  pgbouncer: Promise<Pgbouncer> | null;
  users: number;
}
const run = globalThis as { gasTestRun?: RunWorld };

/** Migrates a template database once per run; every test file clones it. */
async function makeTemplate(): Promise<string> {
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
  return template;
}

/** The template migrates while a Redis Cluster (three masters with a replica each, about 2 s) starts beside it. */
function startWorld(): RunWorld {
  // The dashboard's browser tests serve web/dist: built here once when its sources changed (npm test's
  // preparation has done it already; a bare `npx vitest run` has not).
  ensureWebBuilt();
  cleanLeftoverClusters();
  const template = makeTemplate();
  const cluster = startTestCluster();
  // Whichever fails, the other is not left behind: a started cluster stops when the template fails.
  template.catch(async () => (await cluster.catch(() => null))?.stop());
  cluster.catch(() => {});
  return { template, cluster, pgbouncer: null, users: 0 };
}

export async function setup(project: TestProject): Promise<void> {
  const world = (run.gasTestRun ??= startWorld());
  world.users++;
  project.provide('templateDb', await world.template);
  project.provide('redisClusterNodes', (await world.cluster).nodes);
  if (project.name === PGBOUNCER_PROJECT) {
    world.pgbouncer ??= startPgbouncer(urlFor('postgres'));
    project.provide('pgbouncerPort', (await world.pgbouncer).port);
  }
}

export async function teardown(): Promise<void> {
  const world = run.gasTestRun;
  if (world && --world.users > 0) return;
  delete run.gasTestRun;
  await (await world?.pgbouncer)?.stop();
  await (await world?.cluster.catch(() => null))?.stop();
  await dropDatabases((pid) => pid === process.pid || !alive(pid));
}
