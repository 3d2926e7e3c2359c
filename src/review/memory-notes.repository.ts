import type { Queryable } from '../db.js';

/** Read side of the agent's account memory, for the private-text check on the shipping path. */
export function memoryNotesRepository(q: Queryable) {
  return {
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
