import type { QueueName } from '../../src/jobs/registry.js';
import { startPools, type Pools } from '../../workers/main.js';
import { waitFor } from '../helpers/processes.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { row } from '../helpers/rows.js';

export interface HookWorld extends TestEnv {
  pools: Pools;
  /** Waits until the delivery's turn is finished (replied or failed); returns the turn row. */
  settled(deliveryId: string, timeoutMs?: number): Promise<{ id: string; status: string; kind: string; origin: string; data: unknown }>;
}

/** Shared-fixture options for a file whose hook deliveries reach the agent in-process (high hourly limits). */
export function hookWorldOptions(env: Record<string, string> = {}) {
  return {
    env: { WEBHOOK_HOOK_PER_HOUR: '10000', WEBHOOK_ACCOUNT_PER_HOUR: '10000', ...env },
    pools: ['webhook-events', 'agent-turns'] as QueueName[],
  };
}

/** The hook helpers over a test world whose webhook-events and agent-turns pools run. Closing it closes `base`. */
export function hookWorld(base: TestEnv, pools: Pools): HookWorld {
  return {
    ...base,
    pools,
    async settled(deliveryId, timeoutMs = 20_000) {
      let turn: { id: string; status: string; kind: string; origin: string; data: unknown } | undefined;
      await waitFor(
        async () => {
          const d = await row(base, 'webhook_deliveries', { id: deliveryId });
          if (!d?.turn_id) return false;
          turn = await row(base, 'agent_turns', { id: d.turn_id });
          return turn?.status === 'replied' || turn?.status === 'failed';
        },
        `delivery ${deliveryId} to be handled by the agent`,
        timeoutMs,
      );
      return turn!;
    },
  };
}

/**
 * The shared fixture with `hooks`: the file's env as a HookWorld over its pools (set `options` with
 * hookWorldOptions()). A test takes it as `async ({ hooks: env }) => …`.
 */
export const hookIt = it.extend('hooks', { scope: 'file' }, ({ env, pools }) => hookWorld(env, pools));

/** A test world running the real webhook-events and agent-turns pools in this process. */
export async function setupHookWorld(env: Record<string, string> = {}): Promise<HookWorld> {
  const options = hookWorldOptions(env);
  const base = await setupTestEnv({ env: options.env });
  const pools = await startPools(base.deps, options.pools);
  return {
    ...hookWorld(base, pools),
    async close() {
      await pools.close();
      await base.close();
    },
  };
}
