import type { Queryable } from '../db.js';

/**
 * The two things review needs of the agent's rows, read and written here so that review (below the
 * agent in docs/decisions.md, "Areas and their layers") never imports it: whether a card's turn came
 * from outside data, and the lesson a dismissal leaves in the account memory (as memory-notes.repository.ts
 * reads that memory for the private-text check).
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
    /** One note in the account memory, as the agent's `remember` tool writes it. */
    async remember(accountId: string, text: string, turnId: string | null, at: number): Promise<void> {
      await q('agent_memory').insert({ account_id: accountId, text, turn_id: turnId, created_at: at });
    },
  };
}
