import { recordAudit } from '../audit/audit.service.js';
import { NotFound, RateLimited } from '../errors.js';
import { newId } from '../ids.js';
import { resetMail, sendInBackground } from './mail.js';
import { peopleRepository } from './people.repository.js';
import { type PeopleDeps, personActor, resetLink } from './people.service.js';
import { normaliseEmail } from './people.types.js';
import { checkPassword, hashPassword } from './passwords.js';
import { newSecret, secretHash } from './secrets.js';
import { endSessionsOf } from './sessions.service.js';
import { signInGuard } from './sign-in-guard.js';

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
  const mail = resetMail({ email, link: resetLink(deps.config, token), expiresAt: now + deps.config.dashboard.resetTtlMs });
  sendInBackground(deps, 'password-reset', `pwr-${id}`, mail);
}

/** Sets a new password by a reset link (single use, expiring) and ends every session of the person. */
export async function resetPassword(
  deps: Pick<PeopleDeps, 'config' | 'db' | 'redis'>,
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
    await endSessionsOf(deps, trx, used, now);
    const person = await repo.byId(used.accountId, used.personId);
    if (person) await recordAudit(trx, personActor(person, 'POST', route), used.personId, 200);
  });
}
