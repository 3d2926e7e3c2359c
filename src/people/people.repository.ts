import type { Queryable } from '../db.js';
import type { SealedColumn } from '../secrets/sealed-columns.repository.js';
import type { Invitation, Person, Role } from './people.types.js';

/** A person's TOTP secret, confirmed and pending, kept sealed (`secrets reseal` walks them). */
export const SEALED_TOTP_SECRETS: readonly SealedColumn[] = [
  { table: 'people', column: 'totp_secret', key: ['account_id', 'id'] },
  { table: 'people', column: 'totp_pending_secret', key: ['account_id', 'id'] },
];

interface PersonRow {
  id: string;
  account_id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_enabled_at: number | null;
  totp_last_step: number | null;
  recovery_code_hashes: string[];
  created_at: number;
}

/** A person with what sign-in checks: the password hash and the second factor. */
export interface PersonSecrets extends Person {
  passwordHash: string;
  totpSecret: string | null;
  totpPendingSecret: string | null;
  totpLastStep: number | null;
  recoveryCodeHashes: string[];
}

const person = (r: PersonRow): PersonSecrets => ({
  id: r.id,
  accountId: r.account_id,
  email: r.email,
  name: r.name,
  role: r.role,
  totpEnabled: r.totp_enabled_at !== null,
  createdAt: Number(r.created_at),
  passwordHash: r.password_hash,
  totpSecret: r.totp_secret,
  totpPendingSecret: r.totp_pending_secret,
  totpLastStep: r.totp_last_step === null ? null : Number(r.totp_last_step),
  recoveryCodeHashes: r.recovery_code_hashes,
});

/** Only what a person is, without their secrets. */
export const publicPerson = (p: PersonSecrets): Person => ({
  id: p.id,
  accountId: p.accountId,
  email: p.email,
  name: p.name,
  role: p.role,
  totpEnabled: p.totpEnabled,
  createdAt: p.createdAt,
});

interface InvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  revoked_at: number | null;
}

const invitation = (r: InvitationRow): Invitation & { accountId: string } => ({
  id: r.id,
  accountId: r.account_id,
  email: r.email,
  role: r.role,
  expiresAt: Number(r.expires_at),
});

export function peopleRepository(q: Queryable) {
  return {
    /** The person and their sign-in address (the global table): call it in a transaction. */
    async insert(p: { id: string; accountId: string; email: string; name: string; role: Role; passwordHash: string; createdAt: number }) {
      await q('sign_in_addresses').insert({ email: p.email, account_id: p.accountId, person_id: p.id });
      await q('people').insert({
        id: p.id,
        account_id: p.accountId,
        email: p.email,
        name: p.name,
        role: p.role,
        password_hash: p.passwordHash,
        created_at: p.createdAt,
      });
    },
    /** The person who signs in with the address, in whichever account. */
    async byEmail(email: string): Promise<PersonSecrets | null> {
      const row = await q('sign_in_addresses as s')
        .join('people as p', (j) => j.on('p.account_id', 's.account_id').andOn('p.id', 's.person_id'))
        .where('s.email', email)
        .first<PersonRow | undefined>('p.*');
      return row ? person(row) : null;
    },
    async byId(accountId: string, id: string, lock = false): Promise<PersonSecrets | null> {
      let query = q('people').where({ account_id: accountId, id }).first<PersonRow | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? person(row) : null;
    },
    async list(accountId: string): Promise<Person[]> {
      const rows: PersonRow[] = await q('people')
        .where({ account_id: accountId })
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return rows.map((r) => publicPerson(person(r)));
    },
    /** The account's owners, their rows locked: the last-owner rule is decided under this lock. */
    async lockOwners(accountId: string): Promise<string[]> {
      const rows: { id: string }[] = await q('people').where({ account_id: accountId, role: 'owner' }).forUpdate().select('id');
      return rows.map((r) => r.id);
    },
    async setRole(accountId: string, id: string, role: Role): Promise<void> {
      await q('people').where({ account_id: accountId, id }).update({ role });
    },
    async setPassword(accountId: string, id: string, passwordHash: string): Promise<void> {
      await q('people').where({ account_id: accountId, id }).update({ password_hash: passwordHash });
    },
    /** Removes the person and frees their address; call it in a transaction. */
    async remove(accountId: string, id: string): Promise<boolean> {
      await q('sign_in_addresses').where({ account_id: accountId, person_id: id }).delete();
      return (await q('people').where({ account_id: accountId, id }).delete()) > 0;
    },
    async setPendingTotp(accountId: string, id: string, sealedSecret: string | null): Promise<void> {
      await q('people').where({ account_id: accountId, id }).update({ totp_pending_secret: sealedSecret });
    },
    async enableTotp(
      accountId: string,
      id: string,
      sealedSecret: string,
      recoveryCodeHashes: string[],
      step: number,
      at: number,
    ): Promise<void> {
      await q('people').where({ account_id: accountId, id }).update({
        totp_secret: sealedSecret,
        totp_pending_secret: null,
        totp_enabled_at: at,
        totp_last_step: step,
        recovery_code_hashes: recoveryCodeHashes,
      });
    },
    async disableTotp(accountId: string, id: string): Promise<void> {
      await q('people')
        .where({ account_id: accountId, id })
        .update({ totp_secret: null, totp_pending_secret: null, totp_enabled_at: null, totp_last_step: null, recovery_code_hashes: [] });
    },
    /** Records a TOTP step as used; false when it (or a later one) already was: each code signs in once. */
    async useTotpStep(accountId: string, id: string, step: number): Promise<boolean> {
      const n = await q('people')
        .where({ account_id: accountId, id })
        .andWhere((w) => w.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
        .update({ totp_last_step: step });
      return n > 0;
    },
    /** Spends one recovery code (by its hash); false when it was not there (wrong, or used already). */
    async useRecoveryCode(accountId: string, id: string, codeHash: string): Promise<boolean> {
      const { rows } = (await q.raw(
        `UPDATE people SET recovery_code_hashes = array_remove(recovery_code_hashes, ?)
          WHERE account_id = ? AND id = ? AND ? = ANY (recovery_code_hashes) RETURNING id`,
        [codeHash, accountId, id, codeHash],
      )) as { rows: unknown[] };
      return rows.length > 0;
    },

    // Invitations.
    async insertInvitation(i: {
      id: string;
      accountId: string;
      email: string;
      role: Role;
      tokenHash: string;
      invitedBy: string | null;
      createdAt: number;
      expiresAt: number;
    }): Promise<void> {
      await q('person_invitations').insert({
        id: i.id,
        account_id: i.accountId,
        email: i.email,
        role: i.role,
        token_hash: i.tokenHash,
        invited_by: i.invitedBy,
        created_at: i.createdAt,
        expires_at: i.expiresAt,
      });
    },
    /** An open invitation by its link's hash: not accepted, not withdrawn, not expired. */
    async openInvitationByHash(tokenHash: string, now: number, lock = false): Promise<(Invitation & { accountId: string }) | null> {
      let query = q('person_invitations')
        .where({ token_hash: tokenHash })
        .whereNull('accepted_at')
        .whereNull('revoked_at')
        .where('expires_at', '>', now)
        .first<InvitationRow | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? invitation(row) : null;
    },
    async openInvitations(accountId: string, now: number): Promise<Invitation[]> {
      const rows: InvitationRow[] = await q('person_invitations')
        .where({ account_id: accountId })
        .whereNull('accepted_at')
        .whereNull('revoked_at')
        .where('expires_at', '>', now)
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      return rows.map((r) => {
        const { accountId: _a, ...rest } = invitation(r);
        return rest;
      });
    },
    async acceptInvitation(accountId: string, id: string, at: number): Promise<void> {
      await q('person_invitations').where({ account_id: accountId, id }).update({ accepted_at: at });
    },
    /** Withdraws an open invitation; false when there was none by that id in the account. */
    async revokeInvitation(accountId: string, id: string, at: number): Promise<boolean> {
      const n = await q('person_invitations')
        .where({ account_id: accountId, id })
        .whereNull('accepted_at')
        .whereNull('revoked_at')
        .update({ revoked_at: at });
      return n > 0;
    },

    // Password resets.
    async insertReset(r: { id: string; accountId: string; personId: string; tokenHash: string; createdAt: number; expiresAt: number }) {
      await q('password_resets').insert({
        account_id: r.accountId,
        id: r.id,
        person_id: r.personId,
        token_hash: r.tokenHash,
        created_at: r.createdAt,
        expires_at: r.expiresAt,
      });
    },
    /** Marks an unused, unexpired reset link used; its person, or null when it was not good. */
    async useReset(tokenHash: string, now: number): Promise<{ accountId: string; personId: string } | null> {
      const { rows } = (await q.raw(
        `UPDATE password_resets SET used_at = ?
          WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id, person_id`,
        [now, tokenHash, now],
      )) as { rows: { account_id: string; person_id: string }[] };
      const r = rows[0];
      return r ? { accountId: r.account_id, personId: r.person_id } : null;
    },
    /** Every other link of the person stops working once one was used. */
    async endResets(accountId: string, personId: string, now: number): Promise<void> {
      await q('password_resets').where({ account_id: accountId, person_id: personId }).whereNull('used_at').update({ used_at: now });
    },
  };
}
