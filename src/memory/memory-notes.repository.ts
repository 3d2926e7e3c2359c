import type { Queryable } from '../db.js';

/**
 * The account memory (table agent_memory): the agent's `remember` tool and a dismissal's lesson write it,
 * the private-text check on the shipping path reads it. It stands in review, below the agent, so both can
 * use it; the brain reads the latest notes with each claim (src/agent/core/turn-statements.ts).
 */
export function memoryNotesRepository(q: Queryable) {
  return {
    /** One note, as the agent's `remember` tool writes it. */
    async remember(accountId: string, text: string, turnId: string | null, at: number): Promise<void> {
      await q('agent_memory').insert({ account_id: accountId, text, turn_id: turnId, created_at: at });
    },
    /** The account's newest notes, newest first. */
    async newest(accountId: string, limit: number): Promise<string[]> {
      const rows: { text: string }[] = await q('agent_memory')
        .select('text')
        .where({ account_id: accountId })
        .orderBy('id', 'desc')
        .limit(limit);
      return rows.map((r) => r.text);
    },
  };
}
