import { getAccount } from '../accounts/accounts.service.js';
import { type Actor, recordAudit } from '../audit/audit.service.js';
import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import { BadRequest, NotAllowed, NotFound, RateLimited, Rejected, SignInRefused } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import { seal, unseal } from '../secrets/sealed.js';
import { revokeTokensHeldBy } from '../tokens/tokens.service.js';
import { sendInBackground } from './mail.js';
import { peopleRepository, publicPerson, type PersonSecrets } from './people.repository.js';
import { type Invitation, normaliseEmail, type Person, type Role, type SignedIn } from './people.types.js';
import { checkPassword, hashPassword, passwordMatches, spendPasswordCheck } from './passwords.js';
import { newSecret, secretHash } from './secrets.js';
import { endSessionsOf, startSession } from './sessions.service.js';
import { signInGuard } from './sign-in-guard.js';
import { looksLikeRecoveryCode, newRecoveryCodes, newTotp, recoveryCodeHash, totpStep } from './totp.js';

export type PeopleDeps = { config: Config; db: Db; redis: Redis; logger: Logger };

/** The one answer to a wrong password and to an address no person holds. */
export const WRONG_SIGN_IN = 'Email or password is wrong.';
export const CODE_REQUIRED = 'Enter the code from your authenticator app.';
export const LAST_OWNER = 'An account keeps at least one owner: make someone else an owner first.';

/** Where the links in the mails lead: pages of the dashboard, which call the API routes of the same names. */
export const invitationLink = (config: Pick<Config, 'baseUrl'>, token: string) => `${config.baseUrl}/dashboard/invitations/${token}`;
export const resetLink = (config: Pick<Config, 'baseUrl'>, token: string) => `${config.baseUrl}/dashboard/password-resets/${token}`;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function checkEmail(email: string, field = 'email'): string {
  const e = normaliseEmail(email);
  if (e.length > 254 || !EMAIL.test(e)) throw new BadRequest(`${field} must be an email address such as ana@example.com`);
  return e;
}

function checkName(name: string, field = 'name'): string {
  const n = name.trim();
  if (!n || [...n].length > 100) throw new BadRequest(`${field} must be 1 to 100 characters`);
  return n;
}

/** The audit actor of a person acting without a session yet (accepting an invitation, resetting a password). */
const personActor = (p: { id: string; accountId: string; email: string }, method: string, route: string): Actor => ({
  accountId: p.accountId,
  actor: 'person',
  tokenId: null,
  tokenLabel: null,
  method,
  route,
  personId: p.id,
  personEmail: p.email,
});

/**
 * Makes a person directly (tests, the bench, an operator's first owner through an invitation is the usual
 * way): the address must be free everywhere. Audited as `actor`.
 */
export async function createPerson(
  deps: Pick<PeopleDeps, 'config' | 'db'>,
  actor: Actor,
  input: { accountId: string; email: string; name: string; role: Role; password: string },
): Promise<Person> {
  const email = checkEmail(input.email);
  const name = checkName(input.name);
  checkPassword(input.password);
  const passwordHash = await hashPassword(deps.config.dashboard.password, input.password);
  return deps.db.transaction(async (trx) => {
    await getAccount(trx, input.accountId);
    const repo = peopleRepository(trx);
    if (await repo.byEmail(email)) throw new Rejected('email is already the sign-in address of a person');
    const id = newId('per');
    const createdAt = Date.now();
    await repo.insert({ id, accountId: input.accountId, email, name, role: input.role, passwordHash, createdAt });
    await recordAudit(trx, actor, id, 201);
    return { id, accountId: input.accountId, email, name, role: input.role, totpEnabled: false, createdAt };
  });
}

export interface SignInResult {
  secret: string;
  signedIn: SignedIn;
}

/**
 * Signs a person in: throttled per address and per client network (429 with Retry-After); an unknown
 * address costs one password check as a wrong password does, and answers the same; with TOTP on, a code
 * (or a recovery code, spent) is needed. A new session every time.
 */
export async function signIn(
  deps: PeopleDeps,
  input: { email: string; password: string; code?: string | undefined },
  network: string,
): Promise<SignInResult> {
  const email = normaliseEmail(input.email);
  const guard = signInGuard(deps.redis, deps.config.queuePrefix, deps.config.dashboard.signIn);
  const wait = await guard.blockedFor(email, network);
  if (wait > 0) throw new RateLimited(wait);
  const cost = deps.config.dashboard.password;
  const found = await peopleRepository(deps.db).byEmail(email);
  let good = false;
  if (found) good = await passwordMatches(found.passwordHash, input.password);
  else await spendPasswordCheck(cost, input.password);
  if (!found || !good) {
    await guard.failed(email, network);
    throw new SignInRefused(WRONG_SIGN_IN);
  }
  if (found.totpEnabled) {
    if (!input.code) throw new SignInRefused(CODE_REQUIRED, { codeRequired: true });
    if (!(await secondFactorGood(deps, found, input.code))) {
      await guard.failed(email, network);
      throw new SignInRefused(CODE_REQUIRED, { codeRequired: true });
    }
  }
  await guard.succeeded(email);
  const session = await startSession(deps.db, deps.config, { personId: found.id, accountId: found.accountId });
  const account = await getAccount(deps.db, found.accountId);
  return {
    secret: session.secret,
    signedIn: {
      sessionId: session.sessionId,
      csrfToken: session.csrfToken,
      person: publicPerson(found),
      account: { id: account.id, name: account.name },
    },
  };
}

/** A TOTP code of the current step (each step signs in once) or an unused recovery code (spent). */
async function secondFactorGood(deps: Pick<PeopleDeps, 'config' | 'db'>, p: PersonSecrets, code: string): Promise<boolean> {
  const repo = peopleRepository(deps.db);
  if (looksLikeRecoveryCode(code)) return repo.useRecoveryCode(p.accountId, p.id, recoveryCodeHash(code));
  if (!p.totpSecret) return false;
  const step = totpStep(await unseal(deps.db, deps.config.sealing, p.totpSecret), code);
  return step !== null && (p.totpLastStep === null || step > p.totpLastStep) && repo.useTotpStep(p.accountId, p.id, step);
}

// Invitations.

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
    const who = input.inviterName ? `${input.inviterName} invited you` : 'You are invited';
    sendInBackground({ config: deps.config, db: deps.db, logger: deps.logger }, 'invitation', `inv-${made.invitation.id}`, {
      to: email,
      subject: `You are invited to ${made.accountName} on Growth Agent`,
      text: `${who} to ${made.accountName} as ${input.role === 'owner' ? 'an owner' : 'a member'}.\n\nSet your name and password here (the link works once, until ${new Date(made.invitation.expiresAt).toUTCString()}):\n${link}\n\nIf you did not expect this, ignore this mail.\n`,
    });
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
    const session = await startSession(trx, deps.config, { personId: person.id, accountId: person.accountId }, now);
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

export async function listPeople(db: Db, accountId: string): Promise<{ items: Person[]; invitations: Invitation[] }> {
  const repo = peopleRepository(db);
  const [items, invitations] = await Promise.all([repo.list(accountId), repo.openInvitations(accountId, Date.now())]);
  return { items, invitations };
}

/** Changes a person's role; demoting the account's last owner is a 409. */
export async function changeRole(db: Db, actor: Actor, accountId: string, personId: string, role: Role): Promise<Person> {
  return db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const owners = await repo.lockOwners(accountId);
    const found = await repo.byId(accountId, personId, true);
    if (!found) throw new NotFound();
    if (found.role === 'owner' && role !== 'owner' && owners.length <= 1) throw new Rejected(LAST_OWNER);
    if (found.role !== role) await repo.setRole(accountId, personId, role);
    await recordAudit(trx, actor, personId, 200);
    return { ...publicPerson(found), role };
  });
}

/** Removes a person: their sessions end, the tokens they hold are revoked; the account's last owner stays (409). */
export async function removePerson(deps: PeopleDeps, actor: Actor, accountId: string, personId: string): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const owners = await repo.lockOwners(accountId);
    const found = await repo.byId(accountId, personId, true);
    if (!found) throw new NotFound();
    if (found.role === 'owner' && owners.length <= 1) throw new Rejected(LAST_OWNER);
    await endSessionsOf(trx, { accountId, personId });
    await revokeTokensHeldBy(deps, trx, accountId, personId);
    await repo.remove(accountId, personId);
    await recordAudit(trx, actor, personId, 204);
  });
}

// Password resets.

/**
 * Asks for a reset link: the caller is answered at once and the same way whether or not a person holds the
 * address; the lookup, the link and its mail happen afterwards, in the background. Throttled like sign-in
 * (each request counts) so the form cannot be used to flood an inbox.
 */
export async function requestPasswordReset(deps: PeopleDeps, rawEmail: string, network: string): Promise<void> {
  const email = normaliseEmail(rawEmail);
  const guard = signInGuard(deps.redis, deps.config.queuePrefix, deps.config.dashboard.signIn, 'reset');
  const wait = await guard.blockedFor(email, network);
  if (wait > 0) throw new RateLimited(wait);
  await guard.failed(email, network);
  void mailReset(deps, email).catch((err: Error) => deps.logger.warn({ err: err.name }, 'password reset not prepared'));
}

async function mailReset(deps: PeopleDeps, email: string): Promise<void> {
  const found = await peopleRepository(deps.db).byEmail(email);
  if (!found) return;
  const token = newSecret();
  const id = newId('pwr');
  const now = Date.now();
  await peopleRepository(deps.db).insertReset({
    id,
    accountId: found.accountId,
    personId: found.id,
    tokenHash: secretHash(token),
    createdAt: now,
    expiresAt: now + deps.config.dashboard.resetTtlMs,
  });
  sendInBackground(deps, 'password-reset', `pwr-${id}`, {
    to: email,
    subject: 'Reset your Growth Agent password',
    text: `Someone asked to reset the password of ${email}.\n\nSet a new one here (the link works once, until ${new Date(now + deps.config.dashboard.resetTtlMs).toUTCString()}):\n${resetLink(deps.config, token)}\n\nIf it was not you, ignore this mail: your password stays as it is.\n`,
  });
}

/** Sets a new password by a reset link (single use, expiring) and ends every session of the person. */
export async function resetPassword(
  deps: Pick<PeopleDeps, 'config' | 'db'>,
  token: string,
  password: string,
  route: string,
): Promise<void> {
  checkPassword(password);
  const passwordHash = await hashPassword(deps.config.dashboard.password, password);
  await deps.db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const now = Date.now();
    const used = await repo.useReset(secretHash(token), now);
    if (!used) throw new NotFound();
    await repo.setPassword(used.accountId, used.personId, passwordHash);
    await repo.endResets(used.accountId, used.personId, now);
    await endSessionsOf(trx, used, now);
    const person = await repo.byId(used.accountId, used.personId);
    if (person) await recordAudit(trx, personActor(person, 'POST', route), used.personId, 200);
  });
}

// The second factor.

/** Starts TOTP set-up: a new secret kept (sealed) as pending until a code confirms it. */
export async function beginTotp(
  deps: Pick<PeopleDeps, 'config' | 'db'>,
  who: SignedIn,
): Promise<{ secret: string; otpauthUrl: string; qrSvg: string }> {
  const made = await newTotp('Growth Agent', who.person.email);
  await peopleRepository(deps.db).setPendingTotp(who.account.id, who.person.id, await seal(deps.db, deps.config.sealing, made.secret));
  return made;
}

/** Confirms TOTP with a code of the pending secret: it is on, and ten recovery codes are shown once. */
export async function confirmTotp(deps: Pick<PeopleDeps, 'config' | 'db'>, actor: Actor, who: SignedIn, code: string): Promise<string[]> {
  return deps.db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const found = await repo.byId(who.account.id, who.person.id, true);
    if (!found?.totpPendingSecret) throw new BadRequest('code: start the set-up first (POST /dashboard/api/totp)');
    const step = totpStep(await unseal(trx, deps.config.sealing, found.totpPendingSecret), code);
    if (step === null) throw new BadRequest('code must be the current 6-digit code of your authenticator app');
    const recovery = newRecoveryCodes();
    await repo.enableTotp(found.accountId, found.id, found.totpPendingSecret, recovery.hashes, step, Date.now());
    await recordAudit(trx, actor, found.id, 200);
    return recovery.codes;
  });
}

/** Turns TOTP off after the password is given again. */
export async function disableTotp(deps: Pick<PeopleDeps, 'config' | 'db'>, actor: Actor, who: SignedIn, password: string): Promise<void> {
  const found = await peopleRepository(deps.db).byId(who.account.id, who.person.id);
  if (!found || !(await passwordMatches(found.passwordHash, password))) throw new NotAllowed('The password is wrong.');
  await deps.db.transaction(async (trx) => {
    await peopleRepository(trx).disableTotp(found.accountId, found.id);
    await recordAudit(trx, actor, found.id, 204);
  });
}
