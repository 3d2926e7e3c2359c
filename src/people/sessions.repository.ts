import { accountColumnSql } from '../accounts/settings.repository.js';
import { preparedQuery, type Queryable } from '../db.js';
import type { Role, SignedIn } from './people.types.js';

const ACCOUNT_NAME = accountColumnSql('name', 's.account_id');

interface SessionRow {
  id: string;
  csrf_token: string;
  last_seen_at: string | number;
  expires_at: string | number;
  person_id: string;
  account_id: string;
  email: string;
  name: string;
  role: Role;
  totp_enabled_at: string | number | null;
  created_at: string | number;
  account_name: string;
}

export function sessionsRepository(q: Queryable) {
  return {
    async insert(s: {
      id: string;
      secretHash: string;
      csrfToken: string;
      personId: string;
      accountId: string;
      createdAt: number;
      expiresAt: number;
      network?: string | null;
      deviceHash?: string | null;
    }): Promise<void> {
      await q('dashboard_sessions').insert({
        id: s.id,
        secret_hash: s.secretHash,
        csrf_token: s.csrfToken,
        person_id: s.personId,
        account_id: s.accountId,
        created_at: s.createdAt,
        last_seen_at: s.createdAt,
        expires_at: s.expiresAt,
        network: s.network ?? null,
        device_hash: s.deviceHash ?? null,
      });
    },
    /** The networks and device hashes of the person's sessions started since `since` (at most `limit`, newest first). */
    async recentOrigins(
      accountId: string,
      personId: string,
      since: number,
      limit: number,
    ): Promise<{ network: string | null; deviceHash: string | null }[]> {
      const rows = await q('dashboard_sessions')
        .where({ account_id: accountId, person_id: personId })
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .limit(limit)
        .select('network', 'device_hash');
      return rows.map((r: { network: string | null; device_hash: string | null }) => ({ network: r.network, deviceHash: r.device_hash }));
    },
    /**
     * The live session by its secret's hash, with its person and account: not ended, before its absolute
     * end, and seen within the idle lifetime. One indexed lookup, prepared, as it runs for every request.
     */
    async findLive(
      secretHash: string,
      now: number,
      idleMs: number,
    ): Promise<(SignedIn & { lastSeenAt: number; expiresAt: number }) | null> {
      const rows = await preparedQuery<SessionRow>(q, {
        name: 'dashboard-session-by-hash-v2',
        text: `SELECT s.id, s.csrf_token, s.last_seen_at, s.expires_at, s.person_id, s.account_id,
                      p.email, p.name, p.role, p.totp_enabled_at, p.created_at, ${ACCOUNT_NAME} AS account_name
                 FROM dashboard_sessions s
                 JOIN people p ON p.account_id = s.account_id AND p.id = s.person_id
                WHERE s.secret_hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND s.last_seen_at > $3`,
        values: [secretHash, now, now - idleMs],
      });
      const r = rows[0];
      if (!r) return null;
      return {
        sessionId: r.id,
        csrfToken: r.csrf_token,
        lastSeenAt: Number(r.last_seen_at),
        expiresAt: Number(r.expires_at),
        person: {
          id: r.person_id,
          accountId: r.account_id,
          email: r.email,
          name: r.name,
          role: r.role,
          totpEnabled: r.totp_enabled_at !== null,
          createdAt: Number(r.created_at),
        },
        account: { id: r.account_id, name: r.account_name },
      };
    },
    /**
     * Whether the session is still on (not ended, before its absolute end), and with `idleMs`, seen within the idle
     * lifetime too; never touches it.
     */
    async isLive(accountId: string, id: string, now: number, idleMs?: number): Promise<boolean> {
      const query = q('dashboard_sessions').where({ account_id: accountId, id }).whereNull('ended_at').where('expires_at', '>', now);
      if (idleMs !== undefined) query.andWhere('last_seen_at', '>', now - idleMs);
      const row = await query.first('id');
      return row !== undefined;
    },
    /** Moves the last-seen time of many sessions forward in one statement (never backward). */
    async touchMany(seen: { accountId: string; id: string; at: number }[]): Promise<void> {
      if (seen.length === 0) return;
      const values = seen.map(() => '(?, ?, ?::bigint)').join(', ');
      await q.raw(
        `UPDATE dashboard_sessions s SET last_seen_at = v.at
           FROM (VALUES ${values}) AS v(account_id, id, at)
          WHERE s.account_id = v.account_id AND s.id = v.id AND s.ended_at IS NULL AND s.last_seen_at < v.at`,
        seen.flatMap((x) => [x.accountId, x.id, x.at]),
      );
    },
    /** The ids of the person's live sessions (to mark them ended for every API process first). */
    async liveIdsOf(accountId: string, personId: string): Promise<string[]> {
      const rows = await q('dashboard_sessions').where({ account_id: accountId, person_id: personId }).whereNull('ended_at').select('id');
      return rows.map((r: { id: string }) => r.id);
    },
    /** The live session a secret's hash names, if any: its account and id. */
    async bySecretHash(secretHash: string): Promise<{ accountId: string; id: string } | null> {
      const row = await q('dashboard_sessions').where({ secret_hash: secretHash }).whereNull('ended_at').first('account_id', 'id');
      return row ? { accountId: row.account_id, id: row.id } : null;
    },
    async end(accountId: string, id: string, at: number): Promise<void> {
      await q('dashboard_sessions').where({ account_id: accountId, id }).whereNull('ended_at').update({ ended_at: at });
    },
    async endBySecretHash(secretHash: string, at: number): Promise<void> {
      await q('dashboard_sessions').where({ secret_hash: secretHash }).whereNull('ended_at').update({ ended_at: at });
    },
    /** Ends every live session of the person; the number ended. */
    async endAllOf(accountId: string, personId: string, at: number): Promise<number> {
      return q('dashboard_sessions').where({ account_id: accountId, person_id: personId }).whereNull('ended_at').update({ ended_at: at });
    },
  };
}
