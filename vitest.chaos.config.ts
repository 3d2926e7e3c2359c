import { defineConfig } from 'vitest/config';

// `npm run test:chaos`: only the long reliability variants (files named *.chaos.test.ts), one file at a
// time, with the same global setup (migrated template database) as vitest.config.ts.
export default defineConfig({
  test: {
    include: ['test/**/*.chaos.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every success reply is checked against its route's response schema, in every app a test builds
    // and every process it starts (api/router.ts checkReply).
    env: { CHECK_RESPONSES: 'true' },
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
