import { getAccount } from '../accounts/accounts.service.js';
import { type Actor, recordAudit } from '../audit/audit.service.js';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { BadRequest, NotFound, RateLimited, Rejected, SignInRefused } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import { unseal } from '../secrets/sealed.js';
import { revokeTokensHeldBy } from '../tokens/tokens.service.js';
import { peopleRepository, publicPerson, type PersonSecrets } from './people.repository.js';
import { type Invitation, normaliseEmail, type Person, type Role, type SignedIn } from './people.types.js';
import { checkPassword, hashPassword, passwordMatches, spendPasswordCheck } from './passwords.js';
import { endSessionsOf, isNewOrigin, refreshSessionsOf, startSession } from './sessions.service.js';
import { sendInBackground, signInAlertMail } from './mail.js';
import { secretHash } from './secrets.js';
import { signInGuard } from './sign-in-guard.js';
import { looksLikeRecoveryCode, recoveryCodeHash, totpStep } from './totp.js';

export type PeopleDeps = { config: Config; db: Db; redis: Redis; logger: Logger };

/** The one answer to a wrong password and to an address no person holds. */
export const WRONG_SIGN_IN = 'Email or password is wrong.';
export const CODE_REQUIRED = 'Enter the code from your authenticator app.';
export const LAST_OWNER = 'An account keeps at least one owner: make someone else an owner first.';

/** Where the links in the mails lead: pages of the dashboard, which call the API routes of the same names. */
export const invitationLink = (config: Pick<Config, 'baseUrl'>, token: string) => `${config.baseUrl}/dashboard/invitations/${token}`;
export const resetLink = (config: Pick<Config, 'baseUrl'>, token: string) => `${config.baseUrl}/dashboard/password-resets/${token}`;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkEmail(email: string, field = 'email'): string {
  const e = normaliseEmail(email);
  if (e.length > 254 || !EMAIL.test(e)) throw new BadRequest(`${field} must be an email address such as ana@example.com`);
  return e;
}

export function checkName(name: string, field = 'name'): string {
  const n = name.trim();
  if (!n || [...n].length > 100) throw new BadRequest(`${field} must be 1 to 100 characters`);
  return n;
}

/** The audit actor of a person acting without a session yet (accepting an invitation, resetting a password). */
export const personActor = (p: { id: string; accountId: string; email: string }, method: string, route: string): Actor => ({
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
  device: { secret: string | null; browser?: string | undefined } = { secret: null },
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
  const who = { personId: found.id, accountId: found.accountId };
  const deviceHash = device.secret ? secretHash(device.secret) : null;
  const now = Date.now();
  const alert = await isNewOrigin(deps.db, who, { network, deviceHash }, now);
  const session = await startSession(deps.db, deps.config, who, now, { network, deviceHash });
  const account = await getAccount(deps.db, found.accountId);
  if (alert) {
    const browser = (device.browser ?? 'unknown').replace(/[\r\n]+/g, ' ').slice(0, 200) || 'unknown';
    const mail = signInAlertMail({ email: found.email, accountName: account.name, at: now, network, browser });
    sendInBackground(deps, 'sign-in-alert', `sia-${session.sessionId}`, mail);
  }
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

export async function listPeople(db: Db, accountId: string): Promise<{ items: Person[]; invitations: Invitation[] }> {
  const repo = peopleRepository(db);
  const [items, invitations] = await Promise.all([repo.list(accountId), repo.openInvitations(accountId, Date.now())]);
  return { items, invitations };
}

/** Changes a person's role; demoting the account's last owner is a 409. */
export async function changeRole(
  deps: Pick<PeopleDeps, 'db' | 'redis' | 'config'>,
  actor: Actor,
  accountId: string,
  personId: string,
  role: Role,
): Promise<Person> {
  const changed = await deps.db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const owners = await repo.lockOwners(accountId);
    const found = await repo.byId(accountId, personId, true);
    if (!found) throw new NotFound();
    if (found.role === 'owner' && role !== 'owner' && owners.length <= 1) throw new Rejected(LAST_OWNER);
    if (found.role !== role) {
      // Every API process reads the person's sessions again: a remembered session must not keep the old role.
      await refreshSessionsOf(deps, accountId);
      await repo.setRole(accountId, personId, role);
    }
    await recordAudit(trx, actor, personId, 200);
    return { ...publicPerson(found), role };
  });
  await refreshSessionsOf(deps, accountId, true);
  return changed;
}

/** Removes a person: their sessions end, the tokens they hold are revoked; the account's last owner stays (409). */
export async function removePerson(deps: PeopleDeps, actor: Actor, accountId: string, personId: string): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const repo = peopleRepository(trx);
    const owners = await repo.lockOwners(accountId);
    const found = await repo.byId(accountId, personId, true);
    if (!found) throw new NotFound();
    if (found.role === 'owner' && owners.length <= 1) throw new Rejected(LAST_OWNER);
    await endSessionsOf(deps, trx, { accountId, personId });
    await revokeTokensHeldBy(deps, trx, accountId, personId);
    await repo.remove(accountId, personId);
    await recordAudit(trx, actor, personId, 204);
  });
}
