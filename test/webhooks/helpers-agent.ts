import { startPools, type Pools } from '../../workers/main.js';
import { waitFor } from '../helpers/processes.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';

export interface HookWorld extends TestEnv {
  pools: Pools;
  /** Waits until the delivery's turn is finished (replied or failed); returns the turn row. */
  settled(deliveryId: string, timeoutMs?: number): Promise<{ id: string; status: string; kind: string; origin: string; data: unknown }>;
}

/** A test world running the real webhook-events and agent-turns pools in this process. */
export async function setupHookWorld(env: Record<string, string> = {}): Promise<HookWorld> {
  const base = await setupTestEnv({ env: { WEBHOOK_HOOK_PER_HOUR: '10000', WEBHOOK_ACCOUNT_PER_HOUR: '10000', ...env } });
  const pools = await startPools(base.rt, ['webhook-events', 'agent-turns']);
  return {
    ...base,
    pools,
    async settled(deliveryId, timeoutMs = 20_000) {
      let turn: { id: string; status: string; kind: string; origin: string; data: unknown } | undefined;
      await waitFor(
        async () => {
          const d = await base.rt.db('webhook_deliveries').where({ id: deliveryId }).first();
          if (!d?.turn_id) return false;
          turn = await base.rt.db('agent_turns').where({ id: d.turn_id }).first();
          return turn?.status === 'replied' || turn?.status === 'failed';
        },
        `delivery ${deliveryId} to be handled by the agent`,
        timeoutMs,
      );
      return turn!;
    },
    async close() {
      await pools.close();
      await base.close();
    },
  };
}
