import type { Deps } from '../../deps.js';
import { agentTurn, type DrainReason } from '../../jobs/agent-turns.js';
import { enqueue } from '../../jobs/registry.js';
import type { Turn } from './agent.types.js';

/** Asks the agent-turns pool to run the account's queued turns (idempotent per reason, see agentTurn). */
export async function requestDrain(deps: Pick<Deps, 'queues'>, accountId: string, reason: DrainReason, delay?: number): Promise<void> {
  await enqueue(deps.queues, agentTurn, { accountId }, { ...reason, delay });
}

/**
 * After the commit that recorded `turn`: its account's drain job, delayed to the turn's time (a
 * scheduled wake). A failed enqueue is only logged: the row is the truth and the maintenance sweeper
 * queues any due turn that never started.
 */
export async function queueTurn(deps: Pick<Deps, 'queues' | 'logger'>, turn: Turn): Promise<void> {
  const wait = turn.notBefore - Date.now();
  try {
    await requestDrain(deps, turn.accountId, { why: 'turn', turnId: turn.id }, wait > 0 ? wait : undefined);
  } catch (err) {
    deps.logger.warn({ turnId: turn.id, err: (err as Error).message }, 'turn recorded but not queued; the sweeper will queue it');
  }
}
