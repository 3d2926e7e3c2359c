import { rm } from 'node:fs/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';
import { runArb, runScenario, stateMachineEnv } from './card-state-machine.js';

// The model and the run live in card-state-machine.ts; card-state-machine.chaos.test.ts runs many more.
const MAIL_DIR = `/tmp/gas-state-machine-${process.pid}-${Date.now()}`;
let env: TestEnv;
beforeAll(async () => {
  env = await setupTestEnv({ env: stateMachineEnv(MAIL_DIR) });
});
afterAll(async () => {
  await env.close();
  await rm(MAIL_DIR, { recursive: true, force: true });
});

describe('review card state machine (model-based, fast-check)', () => {
  it('keeps actions consistent with status and resolves each card exactly once over random interleavings', async () => {
    await fc.assert(
      fc.asyncProperty(runArb(4, 14), (run) => runScenario(env, run)),
      { numRuns: 25 },
    );
  }, 180_000);
});
