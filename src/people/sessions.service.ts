import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import { keyspace, type Redis } from '../redis.js';
import { authGuardKeys, markRevoked } from '../tokens/auth-guard.js';
import { Unavailable } from '../errors.js';
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
  from: { network?: string | null; deviceHash?: string | null } = {},
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
    network: from.network ?? null,
    deviceHash: from.deviceHash ?? null,
  });
  return { secret, sessionId, csrfToken };
}

/** A live session as Postgres holds it: who, when it was last seen (as written), and its absolute end. */
export type FoundSession = SignedIn & { lastSeenAt: number; expiresAt: number };

/** Whether a cookie value can be a session's secret at all (anything else names no session). */
export const wellFormedSecret = (secret: string): boolean => /^[0-9A-Za-z]{43}$/.test(secret);

/**
 * The live session of a cookie secret's hash, or null (unknown, ended, idle too long, past its absolute end).
 * Reads only: its last-seen time is written by the caller's `sessionSeenRecorder`.
 */
export function findSession(db: Db, config: Pick<Config, 'dashboard'>, hash: string, now = Date.now()): Promise<FoundSession | null> {
  return sessionsRepository(db).findLive(hash, now, config.dashboard.sessionIdleMs);
}

/**
 * Writes sessions' last-seen times in bounded batches: at most one a session per TOUCH_EVERY_MS (the caller
 * asks `due` first), gathered for `flushMs` and written by one statement of at most `batch` sessions each
 * (the idle lifetime is hours, so a second's delay changes nothing). What waits is bounded too: past
 * `maxPending` sessions a new one is dropped (it is asked again a minute later). A failed write is dropped:
 * the session then looks idle sooner to other processes, never later.
 */
export function sessionSeenRecorder(db: Db, opts: { flushMs?: number; batch?: number; maxPending?: number } = {}) {
  const { flushMs = 1_000, batch = 500, maxPending = 10_000 } = opts;
  let pending = new Map<string, { accountId: string; id: string; at: number }>();
  let timer: NodeJS.Timeout | null = null;
  async function flush(): Promise<void> {
    timer = null;
    const all = [...pending.values()];
    pending = new Map();
    for (let i = 0; i < all.length; i += batch) {
      await sessionsRepository(db)
        .touchMany(all.slice(i, i + batch))
        .catch(() => {});
    }
  }
  return {
    /** Whether a session last written as seen at `seenAt` is due a new write at `now` (a quarter of a short idle lifetime at most). */
    due: (seenAt: number, now: number, idleMs: number): boolean => now - seenAt >= Math.min(TOUCH_EVERY_MS, idleMs / 4),
    seen(accountId: string, id: string, at: number): void {
      if (pending.size >= maxPending && !pending.has(id)) return;
      pending.set(id, { accountId, id, at });
      if (!timer) timer = setTimeout(() => void flush(), flushMs).unref();
    },
    /** Writes what waits now (tests, shutdown). */
    flush: (): Promise<void> => {
      if (timer) clearTimeout(timer);
      return flush();
    },
  };
}

export type SessionSeenRecorder = ReturnType<typeof sessionSeenRecorder>;

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

/** What ending a session needs besides Postgres: Redis, to mark it ended for every API process first. */
export type SessionEndDeps = { redis: Redis; config: Pick<Config, 'queuePrefix'> };

/**
 * Marks sessions ended for every API process before Postgres ends them: an API process remembers a
 * session it resolved (as it remembers a token) and trusts it only on the rate limiter's word, which reads
 * the same revocation marks tokens use (src/tokens/auth-guard.ts), keyed by the session's row id. Redis out
 * of reach → Unavailable, and the caller ends nothing.
 */
export async function markSessionsEnded(deps: SessionEndDeps, accountId: string, ids: string[]): Promise<void> {
  for (const id of ids) await markRevoked(deps.redis, keyspace(deps.config.queuePrefix), accountId, id);
}

export async function endSession(
  deps: SessionEndDeps,
  q: Queryable,
  s: { account: { id: string }; sessionId: string },
  now = Date.now(),
): Promise<void> {
  await markSessionsEnded(deps, s.account.id, [s.sessionId]);
  await sessionsRepository(q).end(s.account.id, s.sessionId, now);
}

/** Ends the session a cookie's secret names, if any: a browser signing in again leaves no session behind. */
export async function endSessionOfSecret(deps: SessionEndDeps, q: Queryable, secret: string, now = Date.now()): Promise<void> {
  if (!wellFormedSecret(secret)) return;
  const found = await sessionsRepository(q).bySecretHash(secretHash(secret));
  if (!found) return;
  await markSessionsEnded(deps, found.accountId, [found.id]);
  await sessionsRepository(q).end(found.accountId, found.id, now);
}

/** Ends every session of the person (sign out everywhere, a new password, removal); the number ended. */
export async function endSessionsOf(
  deps: SessionEndDeps,
  q: Queryable,
  who: { accountId: string; personId: string },
  now = Date.now(),
): Promise<number> {
  await markSessionsEnded(deps, who.accountId, await sessionsRepository(q).liveIdsOf(who.accountId, who.personId));
  return sessionsRepository(q).endAllOf(who.accountId, who.personId, now);
}

/**
 * Makes every API process read the account's remembered sessions (and tokens) from Postgres again, without
 * ending them (a new role, a second factor turned on or off): the account's auth-guard epoch is removed, so
 * the limiter's next call makes a new one and every remembered entry of the account is asked of Postgres once.
 * Called before the change is committed (Redis out of reach → Unavailable, nothing changes) and again after
 * (`afterCommit`, best effort), so a lookup that read the old row while the change was in flight is not kept.
 */
export async function refreshSessionsOf(deps: SessionEndDeps, accountId: string, afterCommit = false): Promise<void> {
  try {
    await deps.redis.del(authGuardKeys(keyspace(deps.config.queuePrefix), accountId, '').epoch);
  } catch {
    if (!afterCommit) throw new Unavailable();
  }
}

/** How far back a sign-in's device and network are compared, and with how many sessions at most. */
export const RECENT_SESSIONS_MS = 90 * 24 * 3600_000;
export const RECENT_SESSIONS = 100;

/**
 * Whether a sign-in comes from somewhere new to the person: neither its device cookie nor its network is among
 * their sessions of the last RECENT_SESSIONS_MS. A person with no such session (a first sign-in) is not new.
 */
export async function isNewOrigin(
  q: Queryable,
  who: { accountId: string; personId: string },
  from: { network: string; deviceHash: string | null },
  now = Date.now(),
): Promise<boolean> {
  const recent = await sessionsRepository(q).recentOrigins(who.accountId, who.personId, now - RECENT_SESSIONS_MS, RECENT_SESSIONS);
  if (recent.length === 0) return false;
  return !recent.some((r) => (from.deviceHash !== null && r.deviceHash === from.deviceHash) || r.network === from.network);
}
