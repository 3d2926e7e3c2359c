import type { Queryable } from '../db.js';

/** The account's agent memory (`remember`); the brain reads the latest notes with each claim (turn-statements.ts). */
export function memoryRepository(q: Queryable) {
  return {
    async remember(accountId: string, text: string, turnId: string | null, at: number): Promise<void> {
      await q('agent_memory').insert({ account_id: accountId, text, turn_id: turnId, created_at: at });
    },
  };
}
