import type { Logger } from '../../logger.js';
import type { Deps } from '../../deps.js';
import { publishDone } from '../core/agent.bus.js';
import { FAILURES } from '../core/agent.types.js';
import { requestDrain } from '../core/drain.js';
import { turnsRepository } from '../core/turns.repository.js';

/**
 * One sweep: `queue: true` messages still queued past their lifetime fail; accounts with a queued turn
 * that never started (its job was never queued, or was lost) or a turn left running (its worker may
 * have died) get a drain job. The drain re-checks everything under the account lock, so a sweep that
 * overlaps a live turn does nothing.
 */
export async function sweepAgent(
  deps: Pick<Deps, 'config' | 'db' | 'redis' | 'queues'>,
  log: Logger,
): Promise<{ expired: number; requeued: number }> {
  const repo = turnsRepository(deps.db);
  const now = Date.now();
  const expired = await repo.expireQueued(now, FAILURES.expired);
  await publishDone(deps.redis, deps.config, expired);
  const before = now - deps.config.maintenance.orphanAfterMs;
  const accounts = await repo.accountsNeedingAttention(before, before, 500);
  const bucket = Math.floor(now / deps.config.maintenance.sweeps.turns);
  for (const accountId of accounts) await requestDrain(deps, accountId, { why: 'sweep', bucket });
  if (expired.length || accounts.length) log.info({ expired: expired.length, requeued: accounts.length }, 'agent sweep');
  return { expired: expired.length, requeued: accounts.length };
}
