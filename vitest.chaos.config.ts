import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:chaos`: the long reliability variants (files named *.chaos.test.ts), one file at a time.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ['test/**/*.chaos.test.ts'],
      exclude: ['**/node_modules/**'],
      fileParallelism: false,
      testTimeout: 600_000,
    },
  }),
);
