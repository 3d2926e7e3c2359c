import { accountColumnSql } from '../accounts/settings.repository.js';
import { preparedQuery, type Queryable } from '../db.js';
import type { Principal, Scope, TokenSummary } from './tokens.types.js';

/** The token's account name (a token's account always exists: deleting an account deletes its tokens). */
const ACCOUNT_NAME = accountColumnSql('name', 't.account_id');

interface TokenRow {
  id: string;
  person_id?: string | null;
  account_id: string;
  label: string;
  scopes: Scope[];
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const summary = (r: TokenRow): TokenSummary => ({
  tokenId: r.id,
  label: r.label,
  scopes: r.scopes,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export function tokensRepository(q: Queryable) {
  return {
    /** Whether the account has a live (unrevoked) token with this scope. */
    async hasLiveScope(accountId: string, scope: string): Promise<boolean> {
      const { rows } = (await q.raw(
        'SELECT EXISTS (SELECT 1 FROM api_tokens WHERE account_id = ? AND revoked_at IS NULL AND ? = ANY (scopes)) AS live',
        [accountId, scope],
      )) as { rows: { live: boolean }[] };
      return rows[0]?.live ?? false;
    },
    async insert(t: { id: string; accountId: string; label: string; scopes: Scope[]; hash: string; createdAt: number }) {
      await q('api_tokens').insert({
        id: t.id,
        account_id: t.accountId,
        label: t.label,
        scopes: t.scopes,
        token_hash: t.hash,
        created_at: t.createdAt,
      });
    },
    async countLive(accountId: string): Promise<number> {
      const row = await q('api_tokens').where({ account_id: accountId }).whereNull('revoked_at').count<{ n: string }[]>({ n: '*' });
      return Number(row[0]?.n ?? 0);
    },
    /**
     * One indexed lookup joining the account: the whole cost of authentication, so it runs as a named
     * prepared statement straight on a pooled connection (knex's builder cost a fifth of a request).
     */
    async findLiveByHash(hash: string): Promise<Principal | null> {
      const rows = await preparedQuery<TokenRow & { account_name: string }>(q, {
        name: 'auth-token-by-hash',
        text: `SELECT t.id, t.label, t.scopes, t.created_at, t.last_used_at, t.account_id, t.person_id, ${ACCOUNT_NAME} AS account_name
                 FROM api_tokens t
                WHERE t.token_hash = $1 AND t.revoked_at IS NULL`,
        values: [hash],
      });
      const row = rows[0];
      if (!row) return null;
      return {
        tokenId: row.id,
        label: row.label,
        scopes: row.scopes,
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
        accountId: row.account_id,
        accountName: row.account_name,
        personId: row.person_id ?? null,
        via: 'token',
      };
    },
    /** Whether the token is not revoked: a request waiting on a turn checks it before answering (prepared, as it runs per wait). */
    async isLive(id: string): Promise<boolean> {
      const rows = await preparedQuery(q, {
        name: 'token-live',
        text: 'SELECT 1 AS live FROM api_tokens WHERE id = $1 AND revoked_at IS NULL',
        values: [id],
      });
      return rows.length > 0;
    },
    async find(id: string): Promise<(TokenSummary & { accountId: string }) | null> {
      const row = await q('api_tokens').where({ id }).first<TokenRow | undefined>();
      return row ? { ...summary(row), accountId: row.account_id } : null;
    },
    /** Revokes once; a second call changes nothing and returns null. */
    async revoke(id: string, at: number): Promise<TokenRow | null> {
      const rows: TokenRow[] = await q('api_tokens').where({ id }).whereNull('revoked_at').update({ revoked_at: at }).returning('*');
      return rows[0] ?? null;
    },
    async list(accountId: string): Promise<TokenSummary[]> {
      const rows: TokenRow[] = await q('api_tokens').where({ account_id: accountId }).orderBy('created_at', 'asc').orderBy('id');
      return rows.map(summary);
    },
    /** The live tokens a person holds. */
    async liveHeldBy(accountId: string, personId: string): Promise<string[]> {
      const rows: { id: string }[] = await q('api_tokens')
        .where({ account_id: accountId, person_id: personId })
        .whereNull('revoked_at')
        .select('id');
      return rows.map((r) => r.id);
    },
    /** Moves last_used_at forward only. */
    async touch(id: string, at: number): Promise<void> {
      await q('api_tokens')
        .where({ id })
        .andWhere((w) => w.whereNull('last_used_at').orWhere('last_used_at', '<', at))
        .update({ last_used_at: at });
    },
  };
}
