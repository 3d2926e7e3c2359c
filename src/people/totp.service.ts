import type { Actor } from '../audit/audit.service.js';
import { recordAudit } from '../audit/audit.service.js';
import { BadRequest, NotAllowed } from '../errors.js';
import { seal, unseal } from '../secrets/sealed.js';
import { peopleRepository } from './people.repository.js';
import type { PeopleDeps } from './people.service.js';
import type { SignedIn } from './people.types.js';
import { passwordMatches } from './passwords.js';
import { refreshSessionsOf } from './sessions.service.js';
import { newRecoveryCodes, newTotp, totpStep } from './totp.js';

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
export async function confirmTotp(
  deps: Pick<PeopleDeps, 'config' | 'db' | 'redis'>,
  actor: Actor,
  who: SignedIn,
  code: string,
): Promise<string[]> {
  // Remembered sessions show whether TOTP is on: every API process reads the person again (sessions.service.ts).
  await refreshSessionsOf(deps, who.account.id);
  const codes = await deps.db.transaction(async (trx) => {
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
  await refreshSessionsOf(deps, who.account.id, true);
  return codes;
}

/** Turns TOTP off after the password is given again. */
export async function disableTotp(
  deps: Pick<PeopleDeps, 'config' | 'db' | 'redis'>,
  actor: Actor,
  who: SignedIn,
  password: string,
): Promise<void> {
  const found = await peopleRepository(deps.db).byId(who.account.id, who.person.id);
  if (!found || !(await passwordMatches(found.passwordHash, password))) throw new NotAllowed('The password is wrong.');
  await refreshSessionsOf(deps, who.account.id);
  await deps.db.transaction(async (trx) => {
    await peopleRepository(trx).disableTotp(found.accountId, found.id);
    await recordAudit(trx, actor, found.id, 204);
  });
  await refreshSessionsOf(deps, who.account.id, true);
}
