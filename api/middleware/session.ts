import type { Request, Response } from 'express';
import type { Config } from '../../src/config.js';
import { isInfraError, NotAllowed, SignInRefused, Unavailable } from '../../src/errors.js';
import type { SignedIn } from '../../src/people/people.types.js';
import { sameText, secretHash } from '../../src/people/secrets.js';
import { type FoundSession, findSession, type SessionSeenRecorder, wellFormedSecret } from '../../src/people/sessions.service.js';
import type { QueueVersion } from '../../src/queue-version/keys.js';
import type { PrincipalMemory } from '../../src/tokens/auth-guard.js';
import { applyLimit, type Spent, spend } from './rate-limit.js';
import { clientNetwork } from '../../src/rate-limit.js';
import { type Principal, SCOPES } from '../../src/tokens/tokens.types.js';
import type { AppDeps, RouteDef } from '../route-def.js';

/** The dashboard's session cookie (docs/dashboard.md, "Sessions"). */
export const SESSION_COOKIE = 'gas_session';
export const CSRF_HEADER = 'x-csrf-token';

export const NOT_SIGNED_IN = 'Sign in to use the dashboard.';
export const BEARER_REFUSED = 'The dashboard takes a session cookie, not a bearer token.';
export const OTHER_SITE = 'This request came from another site; reload the dashboard and try again.';
export const OWNER_ONLY = 'Only an account owner can change people, hooks, mail or approval settings.';

/**
 * The browser's device cookie: a random value kept a year, so a sign-in from a new device can be told
 * (docs/dashboard.md, "Sign-in alerts").
 */
export const DEVICE_COOKIE = 'gas_device';

function cookieValue(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** The session cookie's value from the Cookie header, or null. */
export const sessionSecret = (req: Request): string | null => cookieValue(req, SESSION_COOKIE);

/** The device cookie's value when it is one we could have set (43 base62 characters), or null. */
export function deviceSecret(req: Request): string | null {
  const v = cookieValue(req, DEVICE_COOKIE);
  return v && wellFormedSecret(v) ? v : null;
}

/** Set-Cookie for a device cookie: HttpOnly, SameSite=Lax, the whole site, a year. */
export function deviceCookie(config: Pick<Config, 'baseUrl'>, secret: string): string {
  return `${DEVICE_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${365 * 24 * 3600}${secure(config)}`;
}

const secure = (config: Pick<Config, 'baseUrl'>) => (config.baseUrl.startsWith('https:') ? '; Secure' : '');

/** Set-Cookie for a new session: HttpOnly, SameSite=Lax, the whole site, Secure behind https, until the absolute end. */
export function sessionCookie(config: Pick<Config, 'baseUrl' | 'dashboard'>, secret: string): string {
  const maxAge = Math.floor(config.dashboard.sessionMaxMs / 1000);
  return `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure(config)}`;
}

/** Set-Cookie that removes the cookie (sign-out). */
export function clearedCookie(config: Pick<Config, 'baseUrl'>): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure(config)}`;
}

const originOf = (url: string): string | null => {
  try {
    const o = new URL(url).origin;
    return o === 'null' ? null : o;
  } catch {
    return null;
  }
};

/**
 * The Origin rule of every non-GET dashboard request: its Origin (or, without one, its Referer's origin)
 * is BASE_URL's origin or the request's own. Neither header: refused.
 */
export function checkOrigin(req: Request, config: Pick<Config, 'baseUrl'>): void {
  const origin = req.headers.origin;
  const referer = req.headers.referer;
  const from = origin !== undefined ? (origin === 'null' ? null : originOf(origin)) : referer ? originOf(referer) : null;
  const own = req.headers.host ? `${req.protocol}://${req.headers.host}` : null;
  if (!from || (from !== originOf(config.baseUrl) && from !== own)) throw new NotAllowed(OTHER_SITE);
}

/** What a process remembers of a session beside its principal: the signed-in person, and when it was last seen as written. */
export interface SessionExtra {
  session: SignedIn;
  seenAt: number;
}

export type SessionMemory = PrincipalMemory<SessionExtra>;

/**
 * The signed-in person of a session route, and the rate limit spent: the cookie's live session (401
 * otherwise), the CSRF token on every non-GET (403), and the route's role (403 for a member on an owner's
 * route). A session this process resolved before is trusted on the limiter script's word, as a remembered
 * token is (src/tokens/auth-guard.ts): a session ended anywhere is marked first (sessions.service.ts), the
 * mark comes back with the limiter's answer, and the process asks Postgres again. A remembered session idle
 * past the idle lifetime as this process knows it, or past its absolute end, is asked of Postgres too (which
 * may know of a later request another process served). Its last-seen time is written in batches (`seen`).
 */
export async function admitSession(
  deps: AppDeps,
  memory: SessionMemory,
  seen: SessionSeenRecorder,
  req: Request,
  res: Response,
  route: Pick<RouteDef, 'method' | 'role' | 'bucket'>,
): Promise<{ session: SignedIn; principal: Principal; queue: QueueVersion | null }> {
  const secret = sessionSecret(req);
  if (!secret || !wellFormedSecret(secret)) throw new SignInRefused(NOT_SIGNED_IN);
  const hash = secretHash(secret);
  const now = Date.now();
  const finish = (principal: Principal, extra: SessionExtra, spent: Spent) => {
    const { session } = extra;
    if (seen.due(extra.seenAt, now, deps.config.dashboard.sessionIdleMs)) {
      extra.seenAt = now;
      seen.seen(session.account.id, session.sessionId, now);
    }
    applyLimit(spent, route.bucket, res);
    if (route.method !== 'get') {
      const sent = req.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !sameText(sent, session.csrfToken)) throw new NotAllowed(OTHER_SITE);
    }
    if (route.role === 'owner' && session.person.role !== 'owner') throw new NotAllowed(OWNER_ONLY);
    return { session, principal, queue: 'unavailable' in spent ? null : spent.queue };
  };
  let spent: Spent | null = null;
  const known = memory.get(hash, now);
  if (known && now - known.extra.seenAt < deps.config.dashboard.sessionIdleMs) {
    spent = await spend(deps, known.principal, route.bucket);
    if (!('unavailable' in spent) && !spent.guard.revoked && spent.guard.epoch === known.epoch)
      return finish(known.principal, known.extra, spent);
  }
  if (known) memory.forget(hash);
  let row: FoundSession | null;
  try {
    row = await findSession(deps.db, deps.config, hash, now);
  } catch (err) {
    if (isInfraError(err)) throw new Unavailable();
    throw err;
  }
  if (!row) throw new SignInRefused(NOT_SIGNED_IN);
  const { lastSeenAt, expiresAt, ...session } = row;
  const principal = sessionPrincipal(session);
  const extra = { session, seenAt: lastSeenAt };
  spent ??= await spend(deps, principal, route.bucket);
  if ('unavailable' in spent) memory.forgetAll();
  else if (!spent.guard.revoked) memory.remember(hash, principal, spent.guard.epoch, now, extra, expiresAt);
  return finish(principal, extra, spent);
}

/**
 * A session as the API's caller: every scope (owners and members both hold all of SCOPES; what only owners
 * may do is a dashboard route's `role`), the session's row id where a token's id would be.
 */
export function sessionPrincipal(s: SignedIn): Principal {
  return {
    tokenId: s.sessionId,
    label: s.person.email,
    scopes: [...SCOPES],
    createdAt: s.person.createdAt,
    lastUsedAt: null,
    accountId: s.account.id,
    accountName: s.account.name,
    personId: s.person.id,
    via: 'session',
  };
}

/** Where sign-in failures and reset requests are counted: the client's network (an IPv4 address, an IPv6 /64). */
export const requestNetwork = (req: Request): string => clientNetwork(req.ip);
