import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Files that also run through a real PgBouncer in transaction pooling (the `pgbouncer` project, set up by
 * test/global-setup.ts), with DATABASE_POOLER=transaction: the code a transaction pooler could break
 * (docs/decisions.md, "Postgres behind a pooler"). The turn lock and its concurrency across worker
 * processes, named statements on the turn path, token and webhook intake, the review queue and approve
 * path, the posts memory's listener, and migrating through the pooler.
 */
export const THROUGH_PGBOUNCER = [
  'test/pooler/*.test.ts',
  'test/agent/turn-statements.test.ts',
  'test/agent/worker-processes.test.ts',
  'test/api/auth.test.ts',
  'test/webhooks/intake.test.ts',
  'test/review/review-api.test.ts',
  'test/review/queue-json.test.ts',
  'test/content/post-cache.test.ts',
];

/**
 * Files that must run in a module graph of their own (the `postgres-isolated` project): they set process-wide
 * state that would reach the files after them in a shared worker, or read process-wide state the files
 * before them would have moved. The cluster variants point the process's environment at the Redis Cluster
 * and import the test file they repeat; entry-traces registers OpenTelemetry's global tracer provider;
 * the counter tests read this process's prom-client registry by absolute value.
 */
export const ISOLATED = [
  'test/cluster/**/*.test.ts',
  'test/tracing/entry-traces.test.ts',
  'test/metrics/job-counters.test.ts',
  'test/metrics/work-counters.test.ts',
];

export default defineConfig({
  test: {
    // Long chaos variants run only through `npm run test:chaos` (vitest.chaos.config.ts).
    exclude: ['**/node_modules/**', 'test/**/*.chaos.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/helpers/file-setup.ts'],
    // Every success reply is checked against its route's response schema, in every app a test builds
    // and every process it starts (api/router.ts checkReply).
    // NODE_COMPILE_CACHE: Node keeps the code it compiled for a module on disk, so the test workers and the
    // service processes tests start (bin/start.ts, bin/admin.ts: node with tsx) after the first compile it once
    // per run, not once per process (about a tenth of a process's start-up).
    env: { CHECK_RESPONSES: 'true', NODE_COMPILE_CACHE: path.join(tmpdir(), 'gas-test-compile-cache') },
    pool: 'forks',
    // Each file has its own database (cloned from a migrated template) and its own Redis prefix.
    fileParallelism: true,
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // Files share their worker's module graph (isolate: false): every file imports most of the service
    // (the app, the pools), and evaluating that again for each file was a third of the suite's time. A
    // file's world (database, Redis prefix, app, pools) is still its own, made and closed by the fixture,
    // and test/helpers/file-setup.ts gives each file the fixture's options afresh.
    isolate: false,
    projects: [
      { extends: true, test: { name: 'postgres', include: ['test/**/*.test.ts'], exclude: ['test/pooler/**', ...ISOLATED] } },
      { extends: true, test: { name: 'postgres-isolated', include: ISOLATED, isolate: true } },
      { extends: true, test: { name: 'pgbouncer', include: THROUGH_PGBOUNCER } },
    ],
  },
});
