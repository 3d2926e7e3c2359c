import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Long chaos variants run only through `npm run test:chaos` (vitest.chaos.config.ts).
    exclude: ['**/node_modules/**', 'test/**/*.chaos.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Each file has its own database (cloned from a migrated template) and its own Redis prefix.
    fileParallelism: true,
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
