import type { Queryable } from '../db.js';

/**
 * The two things review needs of the agent's rows, read and written here so that review (below the
 * agent in docs/decisions.md, "Areas and their layers") never imports it: whether a card's turn came
 * from outside data, and the lesson a dismissal leaves in the account memory (as memory-notes.repository.ts
 * reads that memory for the private-text check).
 */
export function agentRows(q: Queryable) {
  return {
    /** A turn a webhook payload started (DESIGN rule 8): what it makes never ships by itself. */
    async turnFromOutside(accountId: string, turnId: string): Promise<boolean> {
      const turn = await q('agent_turns').where({ account_id: accountId, id: turnId }).first<{ kind: string; origin: string } | undefined>('kind', 'origin');
      return turn !== undefined && (turn.kind === 'event' || turn.origin === 'hook');
    },
    /** One note in the account memory, as the agent's `remember` tool writes it. */
    async remember(accountId: string, text: string, turnId: string | null, at: number): Promise<void> {
      await q('agent_memory').insert({ account_id: accountId, text, turn_id: turnId, created_at: at });
    },
  };
}
