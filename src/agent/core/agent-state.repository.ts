import type { Queryable } from '../../db.js';
import { turnsRepository } from './turns.repository.js';

/**
 * Whether an area above the agent holds work for it that no turn took yet, since a time (epoch ms): the webhooks'
 * accepted events (src/webhooks/webhooks.repository.ts `waitingForAgent`), handed in by the status route.
 */
export type WorkWaiting = (accountId: string, since: number) => Promise<boolean>;

/** Per-account agent state (activity times) and the status read from it and the account's turns (spec 2.5). */
export function agentStateRepository(q: Queryable) {
  return {
    /** Moves each account's last activity forward, in one statement, in account order (no lock-order deadlock). */
    async touchStates(accountIds: string[], at: number): Promise<void> {
      const ids = [...new Set(accountIds)].sort();
      if (!ids.length) return;
      await q('agent_state')
        .insert(ids.map((id) => ({ account_id: id, last_activity_at: at, last_turn_at: null })))
        .onConflict('account_id')
        .merge({ last_activity_at: q.raw('GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at)') });
    },
    async status(accountId: string, now: number, windowMs: number, waitingElsewhere: WorkWaiting) {
      const state = await q('agent_state')
        .where({ account_id: accountId })
        .first<{ last_activity_at: number | null; last_turn_at: number | null } | undefined>();
      // Work that is started or due and unfinished counts (docs/decisions/agent.md, "Agent turns: crash
      // recovery"): a running turn, a turn queued again after its worker died, an accepted event or a
      // message waiting for a worker. A wake that is not due yet does not.
      const running = await q('agent_turns')
        .where({ account_id: accountId })
        .andWhere((w) =>
          w
            .where((r) => r.where({ status: 'running' }).andWhere('started_at', '>', now - windowMs))
            .orWhere((p) =>
              p
                .where({ status: 'queued' })
                .andWhere('not_before', '<=', now)
                .andWhereRaw('GREATEST(not_before, coalesce(started_at, 0)) > ?', [now - windowMs]),
            ),
        )
        .first('id');
      // An event accepted at a hook URL but not handed to the agent yet (its job waits for a worker, or
      // was in a worker that died) is work waiting too: the handed `waitingElsewhere` asks the webhooks.
      const waiting = running || (await waitingElsewhere(accountId, now - windowMs));
      const wakes = await turnsRepository(q).waitingWakes(accountId);
      return {
        running: Boolean(waiting),
        lastActivityAt: state?.last_activity_at ?? null,
        lastTurnAt: state?.last_turn_at ?? null,
        pendingWakes: wakes.count,
        nextWakeAt: wakes.next,
      };
    },
  };
}
