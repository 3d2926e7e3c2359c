import type { Queryable } from '../db.js';

/**
 * Reply tokens kept in clear by the version before tokens were hashed: `mail_threads.reply_token` (its hash is
 * kept beside it) and `replyToken` in a fence's details (the plaintext a re-ship used).
 */
export function plainTokensRepository(q: Queryable) {
  return {
    /** Clears the plaintext of up to `limit` threads (their hash stays); how many. */
    async clearThreads(limit: number): Promise<number> {
      const { rowCount } = await q.raw<{ rowCount: number }>(
        `UPDATE mail_threads SET reply_token = NULL
          WHERE send_id IN (SELECT send_id FROM mail_threads WHERE reply_token IS NOT NULL LIMIT ?)`,
        [limit],
      );
      return rowCount;
    },
    async countPlainThreads(): Promise<number> {
      const [row] = await q('mail_threads').whereNotNull('reply_token').count<{ n: string }[]>({ n: '*' });
      return Number(row?.n ?? 0);
    },
    /** Up to `limit` fences whose details still hold the token in clear. */
    async plainFences(limit: number): Promise<{ accountId: string; id: string; token: string }[]> {
      const rows = (await q('shipments')
        .select('account_id', 'id', q.raw(`details->>'replyToken' AS token`))
        .whereRaw(`details->>'replyToken' IS NOT NULL`)
        .orderBy(['account_id', 'id'])
        .limit(limit)) as { account_id: string; id: string; token: string | null }[];
      return rows.map((r) => ({ accountId: r.account_id, id: r.id, token: r.token ?? '' }));
    },
    /** Swaps a fence's plaintext token for its sealed copy, if it still holds `token`; true when swapped. */
    async sealFence(f: { accountId: string; id: string; token: string }, sealed: string): Promise<boolean> {
      const n = await q('shipments')
        .where({ account_id: f.accountId, id: f.id })
        .whereRaw(`coalesce(details->>'replyToken', '') = ?`, [f.token])
        .update({ details: q.raw(`(details - 'replyToken') || jsonb_build_object('replyTokenSealed', ?::text)`, [sealed]) });
      return n > 0;
    },
  };
}
