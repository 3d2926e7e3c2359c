import type { Queryable } from '../db.js';

/**
 * What review needs of the agent's turn rows, read here so that review (below the agent in
 * docs/decisions/code-structure.md, "Areas and their layers") never imports it: whether a card's turn came from outside
 * data. The account memory has its own repository here (memory-notes.repository.ts).
 */
export function agentRows(q: Queryable) {
  return {
    /** What decides whether a turn carried outside data (src/review/outside-data.ts decides it), or null. */
    async turn(accountId: string, turnId: string): Promise<{ kind: string; origin: string; data: unknown } | null> {
      const row = await q('agent_turns')
        .where({ account_id: accountId, id: turnId })
        .first<{ kind: string; origin: string; data: unknown } | undefined>('kind', 'origin', 'data');
      return row ?? null;
    },
  };
}
