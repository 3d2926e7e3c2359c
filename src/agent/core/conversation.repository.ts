import type { Queryable } from '../../db.js';

/** Exchanges read back as a conversation: a token's thread (API) and the brain's recent history. */
export function conversationRepository(q: Queryable) {
  return {
    /** A token's thread: its API messages and the agent's bubbles to them, newest first. */
    async thread(accountId: string, tokenId: string, limit: number) {
      const rows: { role: 'user' | 'agent'; request_id: string; text: string; at: number }[] = await q
        .select('*')
        .from(
          q
            .select(q.raw(`'user' as role`), 'id as request_id', 'text', 'created_at as at', q.raw('0 as ord'), q.raw('0::bigint as seq'))
            .from('agent_turns')
            .where({ account_id: accountId, token_id: tokenId, kind: 'message', origin: 'api' })
            .unionAll((u) =>
              u
                .select(q.raw(`'agent' as role`), 'r.turn_id as request_id', 'r.text', 'r.at', q.raw('1 as ord'), 'r.id as seq')
                .from('agent_replies as r')
                .join('agent_turns as t', 't.id', 'r.turn_id')
                .where({ 't.account_id': accountId, 't.token_id': tokenId, 't.kind': 'message', 't.origin': 'api' }),
            )
            .as('items'),
        )
        .orderBy('at', 'desc')
        .orderBy('ord', 'desc')
        .orderBy('seq', 'desc')
        .limit(limit);
      return rows.map((r) => ({ role: r.role, requestId: r.request_id, text: r.text, at: r.at }));
    },
    /** Recent exchanges of the account (every origin) for the brain's context, oldest first. */
    async recentHistory(accountId: string, beforeTurnId: string, n: number): Promise<{ role: 'user' | 'agent'; text: string }[]> {
      const turns: { id: string; text: string }[] = await q('agent_turns')
        .where({ account_id: accountId, kind: 'message' })
        .whereNot({ id: beforeTurnId })
        .whereIn('status', ['replied', 'failed'])
        .orderBy('created_at', 'desc')
        .limit(n)
        .select('id', 'text');
      if (!turns.length) return [];
      const replies: { turn_id: string; text: string }[] = await q('agent_replies')
        .whereIn(
          'turn_id',
          turns.map((t) => t.id),
        )
        .orderBy('id')
        .select('turn_id', 'text');
      const out: { role: 'user' | 'agent'; text: string }[] = [];
      for (const t of turns.reverse()) {
        out.push({ role: 'user', text: t.text });
        for (const r of replies) if (r.turn_id === t.id) out.push({ role: 'agent', text: r.text });
      }
      return out;
    },
  };
}
