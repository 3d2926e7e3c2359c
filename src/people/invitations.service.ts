import { getAccount } from '../accounts/accounts.service.js';
import { type Actor, recordAudit } from '../audit/audit.service.js';
import type { Db, Queryable } from '../db.js';
import { NotFound, Rejected } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { invitationMail, sendInBackground } from './mail.js';
import { peopleRepository } from './people.repository.js';
import { checkEmail, checkName, invitationLink, type PeopleDeps, personActor, type SignInResult } from './people.service.js';
import type { Invitation, Person, Role } from './people.types.js';
import { checkPassword, hashPassword } from './passwords.js';
import { newSecret, secretHash } from './secrets.js';
import { startSession } from './sessions.service.js';

export interface InvitationMade {
  invitation: Invitation;
  link: string;
}

/**
 * Invites an address to the account with a role: a single-use link (kept as its hash) good for
 * DASHBOARD_INVITATION_TTL_HOURS. A person of this account already at that address is a 409; an address
 * that signs in elsewhere is invited all the same (saying so would tell an owner of one account who holds
 * another), and accepting then says the address is taken, to its holder alone. An earlier open invitation
 * of the address to this account is withdrawn. `mail`: the link is mailed in the background.
 */
export async function invitePerson(
  deps: Pick<PeopleDeps, 'config' | 'db'> & { logger?: Logger },
  actor: Actor,
  input: { accountId: string; email: string; role: Role; invitedBy: string | null; inviterName?: string },
): Promise<InvitationMade> {
  const email = checkEmail(input.email);
  const token = newSecret();
  const now = Date.now();
  const made = await deps.db.transaction(async (trx) => {
    const account = await getAccount(trx, input.accountId, true);
    const repo = peopleRepository(trx);
    const holder = await repo.byEmail(email);
    if (holder?.accountId === input.accountId) throw new Rejected('email is already a person of this account');
    await withdrawOpen(trx, input.accountId, email, now);
    const invitation: Invitation = { id: newId('inv'), email, role: input.role, expiresAt: now + deps.config.dashboard.invitationTtlMs };
    await repo.insertInvitation({
      ...invitation,
      accountId: input.accountId,
      tokenHash: secretHash(token),
      invitedBy: input.invitedBy,
      createdAt: now,
    });
    await recordAudit(trx, actor, invitation.id, 201);
    return { invitation, accountName: account.name };
  });
  const link = invitationLink(deps.config, token);
  if (deps.logger) {
    const mail = invitationMail({ ...made, email, role: input.role, inviterName: input.inviterName, link });
    sendInBackground({ config: deps.config, db: deps.db, logger: deps.logger }, 'invitation', `inv-${made.invitation.id}`, mail);
  }
  return { invitation: made.invitation, link };
}

async function withdrawOpen(trx: Queryable, accountId: string, email: string, now: number): Promise<void> {
  const repo = peopleRepository(trx);
  for (const open of await repo.openInvitations(accountId, now))
    if (open.email === email) await repo.revokeInvitation(accountId, open.id, now);
}

/** What the invitation page shows; 404 when the link is unknown, used, withdrawn or expired. */
export async function viewInvitation(db: Db, token: string): Promise<{ email: string; accountName: string; role: Role }> {
  const found = await peopleRepository(db).openInvitationByHash(secretHash(token), Date.now());
  if (!found) throw new NotFound();
  const account = await getAccount(db, found.accountId);
  return { email: found.email, accountName: account.name, role: found.role };
}

/** Accepts an invitation: the person is made with their name and password, and signed in. */
export async function acceptInvitation(
  deps: PeopleDeps,
  token: string,
  input: { name: string; password: string },
  route: string,
  from: { network?: string; deviceSecret?: string | null } = {},
): Promise<SignInResult> {
  const name = checkName(input.name);
  checkPassword(input.password);
  const passwordHash = await hashPassword(deps.config.dashboard.password, input.password);
  const now = Date.now();
  const { person, session, account } = await deps.db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const inv = await repo.openInvitationByHash(secretHash(token), now, true);
    if (!inv) throw new NotFound();
    if (await repo.byEmail(inv.email)) throw new Rejected('This address already signs in to an account: sign in with it instead.');
    const person: Person = {
      id: newId('per'),
      accountId: inv.accountId,
      email: inv.email,
      name,
      role: inv.role,
      totpEnabled: false,
      createdAt: now,
    };
    await repo.insert({ ...person, passwordHash });
    await repo.acceptInvitation(inv.accountId, inv.id, now);
    await recordAudit(trx, personActor(person, 'POST', route), person.id, 200);
    // Where this first session came from: a later sign-in from here is not new (sign-in alerts).
    const session = await startSession(trx, deps.config, { personId: person.id, accountId: person.accountId }, now, {
      network: from.network ?? null,
      deviceHash: from.deviceSecret ? secretHash(from.deviceSecret) : null,
    });
    return { person, session, account: await getAccount(trx, inv.accountId) };
  });
  return {
    secret: session.secret,
    signedIn: { sessionId: session.sessionId, csrfToken: session.csrfToken, person, account: { id: account.id, name: account.name } },
  };
}

export async function withdrawInvitation(db: Db, actor: Actor, accountId: string, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    if (!(await peopleRepository(trx).revokeInvitation(accountId, id, Date.now()))) throw new NotFound();
    await recordAudit(trx, actor, id, 204);
  });
}
