import { randomBytes } from 'node:crypto';
import type { Test } from 'supertest';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { adminActor } from '../../src/audit/audit.service.js';
import { createPerson } from '../../src/people/people.service.js';
import type { Role } from '../../src/people/people.types.js';
import type { TestEnv } from './env.js';

/** A password that passes the rule, the one every helper-made person has unless told otherwise. */
export const PASSWORD = 'correct horse battery staple';

export interface SignedInPerson {
  /** The `Cookie` header value: `gas_session=…`. */
  cookie: string;
  csrfToken: string;
  personId: string;
  accountId: string;
  email: string;
  password: string;
  /** A dashboard request as the page makes it: the cookie, the dashboard's own Origin, and (non-GET) the CSRF token. */
  request(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown): Test;
}

/** A fresh address no other person holds. */
export const freshEmail = (name = 'person'): string => `${name}-${randomBytes(5).toString('hex')}@example.com`;

/** The dashboard's own origin (BASE_URL's), as a browser on the dashboard sends it. */
export const dashboardOrigin = (env: TestEnv): string => new URL(env.config.baseUrl).origin;

/** Signs in over HTTP as the dashboard does; the reply as sent (its status is not checked). */
export function signInRequest(env: TestEnv, body: Record<string, unknown>): Test {
  return env.api().post('/dashboard/api/session').set('Origin', dashboardOrigin(env)).send(body);
}

/** The `name=value` of a Set-Cookie reply's session cookie, or null. */
export function sessionCookieOf(setCookie: string[] | string | undefined): string | null {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const found = all.find((c) => c.startsWith('gas_session=') && !c.startsWith('gas_session=;'));
  return found ? found.split(';')[0]! : null;
}

/** A request of a signed-in person (the cookie, the dashboard's Origin, the CSRF token on non-GETs). */
export function asPerson(
  env: TestEnv,
  s: { cookie: string; csrfToken: string },
): (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown) => Test {
  return (method, path, body) => {
    let req = env.api()[method](path).set('Cookie', s.cookie);
    if (method !== 'get') req = req.set('Origin', dashboardOrigin(env)).set('X-CSRF-Token', s.csrfToken);
    return body === undefined ? req : req.send(body as object);
  };
}

/** Signs an existing person in over HTTP; throws when sign-in does not answer 200. */
export async function signInAs(env: TestEnv, who: { email: string; password: string; code?: string }) {
  const res = await signInRequest(env, { email: who.email, password: who.password, ...(who.code === undefined ? {} : { code: who.code }) });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${JSON.stringify(res.body)}`);
  const cookie = sessionCookieOf(res.headers['set-cookie']);
  if (!cookie) throw new Error('sign-in set no session cookie');
  const csrfToken = String(res.body.csrfToken);
  return { cookie, csrfToken, personId: String(res.body.person.id), request: asPerson(env, { cookie, csrfToken }) };
}

/**
 * A person made directly through the service (in a new account unless `accountId` is given) and signed in
 * over HTTP, as the dashboard does.
 */
export async function signedIn(
  env: TestEnv,
  opts: { role?: Role; accountId?: string; email?: string; name?: string; password?: string } = {},
): Promise<SignedInPerson> {
  const accountId = opts.accountId ?? (await createAccount(env.deps.db, 'Acme')).id;
  const email = opts.email ?? freshEmail(opts.role ?? 'owner');
  const password = opts.password ?? PASSWORD;
  await createPerson(env.deps, adminActor(accountId, 'person create'), {
    accountId,
    email,
    name: opts.name ?? 'Ana Lima',
    role: opts.role ?? 'owner',
    password,
  });
  const s = await signInAs(env, { email, password });
  return { ...s, accountId, email, password };
}
