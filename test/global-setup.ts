import type { TestProject } from 'vitest/node';
import { configWith } from '../src/config.js';
import { createDb, migrate } from '../src/db.js';
import { preflight } from '../src/preflight.js';
import { TEST_DB_PREFIX, urlFor, withAdminClient } from './helpers/db.js';
import { cleanLeftoverClusters, startTestCluster, type TestCluster } from './helpers/redis-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's migrated template database; every test file clones it. */
    templateDb: string;
    /** This run's Redis Cluster (REDIS_CLUSTER_NODES form); the cluster variants of the Redis tests run on it. */
    redisClusterNodes: string;
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

async function migrateTemplate(): Promise<string> {
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

let cluster: TestCluster | null = null;

/** Migrates a template database once per run (every test file clones it) and starts a Redis Cluster beside it. */
export async function setup(project: TestProject): Promise<void> {
  const problems = await preflight(configWith({}));
  if (problems.length) throw new Error(problems.join('\n'));
  cleanLeftoverClusters();
  // Three masters with a replica each on free loopback ports, about 2 s, while the template migrates.
  const [template, started] = await Promise.allSettled([migrateTemplate(), startTestCluster()]);
  if (started.status === 'fulfilled') cluster = started.value;
  if (template.status === 'rejected' || started.status === 'rejected') {
    await cluster?.stop();
    throw template.status === 'rejected' ? template.reason : (started as PromiseRejectedResult).reason;
  }
  project.provide('templateDb', template.value);
  project.provide('redisClusterNodes', started.value.nodes);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  await dropDatabases((pid) => pid === process.pid || !alive(pid));
}
