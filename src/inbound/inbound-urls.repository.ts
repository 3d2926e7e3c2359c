import type { Queryable } from '../db.js';

/** Per-account inbound URLs (table `inbound_urls`): the secret's SHA-256 only, one live secret per account. */
export function inboundUrlsRepository(q: Queryable) {
  return {
    /** Sets the account's secret hash, replacing the one it had (the old URL stops working at commit). */
    async put(row: { id: string; accountId: string; secretHash: string; at: number }): Promise<void> {
      await q('inbound_urls')
        .insert({ id: row.id, account_id: row.accountId, secret_hash: row.secretHash, created_at: row.at })
        .onConflict('account_id')
        .merge(['id', 'secret_hash', 'created_at']);
    },
    /** The account whose secret hashes to `secretHash`, or null. */
    async accountFor(secretHash: string): Promise<string | null> {
      const row: { account_id: string } | undefined = await q('inbound_urls')
        .select('account_id')
        .where({ secret_hash: secretHash })
        .first();
      return row?.account_id ?? null;
    },
  };
}
