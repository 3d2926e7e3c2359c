import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Long chaos variants run only through `npm run test:chaos` (vitest.chaos.config.ts).
    exclude: ['**/node_modules/**', 'test/**/*.chaos.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every success reply is checked against its route's response schema, in every app a test builds
    // and every process it starts (api/router.ts checkReply).
    env: { CHECK_RESPONSES: 'true' },
    pool: 'forks',
    // Each file has its own database (cloned from a migrated template) and its own Redis prefix.
    fileParallelism: true,
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
