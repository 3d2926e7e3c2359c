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
    /** Whether the account has an inbound URL (received mail can reach it that way: `/results` asks). */
    async has(accountId: string): Promise<boolean> {
      return Boolean(await q('inbound_urls').where({ account_id: accountId }).first('id'));
    },
    /** The secret hash the account's URL has now, or null. */
    async hashOf(accountId: string): Promise<string | null> {
      const row: { secret_hash: string } | undefined = await q('inbound_urls').where({ account_id: accountId }).first('secret_hash');
      return row?.secret_hash ?? null;
    },
    /** The account whose secret hashes to `secretHash`, with the raw inbound bytes it keeps, or null. */
    async accountFor(secretHash: string): Promise<{ accountId: string; storedBytes: number } | null> {
      const row: { account_id: string; bytes: string | null } | undefined = await q('inbound_urls as u')
        .leftJoin('inbound_account_bytes as b', 'b.account_id', 'u.account_id')
        .select('u.account_id', 'b.bytes')
        .where({ 'u.secret_hash': secretHash })
        .first();
      return row ? { accountId: row.account_id, storedBytes: Number(row.bytes ?? 0) } : null;
    },
  };
}
