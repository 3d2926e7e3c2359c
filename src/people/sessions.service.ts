import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import { newId, randomBase62 } from '../ids.js';
import type { SignedIn } from './people.types.js';
import { newSecret, secretHash } from './secrets.js';
import { sessionsRepository } from './sessions.repository.js';

/** A session's last-seen time is written at most this often (the idle lifetime is hours). */
const TOUCH_EVERY_MS = 60_000;

export const SESSION_ID_PREFIX = 'ses';

/**
 * Starts a session: a new random secret for the cookie (only its hash is kept), a new id, a new CSRF token.
 * Every sign-in makes a new one, so a session id planted before sign-in is never the signed-in one.
 */
export async function startSession(
  q: Queryable,
  config: Pick<Config, 'dashboard'>,
  who: { personId: string; accountId: string },
  now = Date.now(),
): Promise<{ secret: string; sessionId: string; csrfToken: string }> {
  const secret = newSecret();
  const sessionId = newId(SESSION_ID_PREFIX);
  const csrfToken = randomBase62(32);
  await sessionsRepository(q).insert({
    id: sessionId,
    secretHash: secretHash(secret),
    csrfToken,
    personId: who.personId,
    accountId: who.accountId,
    createdAt: now,
    expiresAt: now + config.dashboard.sessionMaxMs,
  });
  return { secret, sessionId, csrfToken };
}

/**
 * The signed-in person of a cookie's secret, or null (unknown, ended, idle too long, past its absolute
 * end). Its last-seen time moves forward at most once a minute, in the background.
 */
export async function resolveSession(
  db: Db,
  config: Pick<Config, 'dashboard'>,
  secret: string,
  now = Date.now(),
): Promise<SignedIn | null> {
  if (!/^[0-9A-Za-z]{43}$/.test(secret)) return null;
  const repo = sessionsRepository(db);
  const found = await repo.findLive(secretHash(secret), now, config.dashboard.sessionIdleMs);
  if (!found) return null;
  if (now - found.lastSeenAt >= TOUCH_EVERY_MS) repo.touch(found.account.id, found.sessionId, now).catch(() => {});
  const { lastSeenAt: _seen, ...signedIn } = found;
  return signedIn;
}

/** Whether the session is still on (not ended, before its absolute end): a request waiting on the agent checks it. */
export function sessionLive(q: Queryable, s: { account: { id: string }; sessionId: string }, now = Date.now()): Promise<boolean> {
  return sessionsRepository(q).isLive(s.account.id, s.sessionId, now);
}

/**
 * `sessionLive` with the idle lifetime too, without counting as activity: a page left open with a live stream
 * (docs/dashboard.md, "Live updates") does not keep its session from going idle.
 */
export function sessionIsLive(
  q: Queryable,
  config: Pick<Config, 'dashboard'>,
  s: { accountId: string; sessionId: string },
  now = Date.now(),
) {
  return sessionsRepository(q).isLive(s.accountId, s.sessionId, now, config.dashboard.sessionIdleMs);
}

export function endSession(q: Queryable, s: { account: { id: string }; sessionId: string }, now = Date.now()): Promise<void> {
  return sessionsRepository(q).end(s.account.id, s.sessionId, now);
}

/** Ends every session of the person (sign out everywhere, a new password, removal). */
export function endSessionsOf(q: Queryable, who: { accountId: string; personId: string }, now = Date.now()): Promise<number> {
  return sessionsRepository(q).endAllOf(who.accountId, who.personId, now);
}
