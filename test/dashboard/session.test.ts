import { describe, expect } from 'vitest';
import { SessionView } from '../../api/dashboard/session.schemas.js';
import { sessionCookie } from '../../api/middleware/session.js';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { adminActor } from '../../src/audit/audit.service.js';
import { createPerson } from '../../src/people/people.service.js';
import { configWith } from '../helpers/config.js';
import { auth } from '../helpers/auth.js';
import { dashboardOrigin, freshEmail, PASSWORD, sessionCookieOf, signedIn, signInAs, signInRequest } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';
import { agedSessions, expiredRows } from '../helpers/aged-rows.js';
import { sessionsOf } from '../helpers/rows.js';

const OTHER_SITE = { error: 'This request came from another site; reload the dashboard and try again.' };

describe('signing in', () => {
  it('answers the person, the account and a CSRF token, and sets an HttpOnly, SameSite=Lax session cookie', async ({ env }) => {
    const account = await createAccount(env.deps.db, 'Northwind');
    const email = freshEmail();
    await createPerson(env.deps, adminActor(account.id, 'person create'), {
      accountId: account.id,
      email,
      name: 'Bo',
      role: 'member',
      password: PASSWORD,
    });
    const res = await signInRequest(env, { email: email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(200);
    const body = SessionView.parse(res.body);
    expect(body.person).toMatchObject({ email, name: 'Bo', role: 'member', totpEnabled: false });
    expect(body.account).toEqual({ id: account.id, name: 'Northwind' });
    const set = res.headers['set-cookie'] as unknown as string[];
    // The session cookie, and (a browser new to us) the device cookie sign-in alerts know it by.
    expect(set).toHaveLength(2);
    expect(set[0]).toMatch(/^gas_session=[0-9A-Za-z]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
    expect(set[1]).toMatch(/^gas_device=[0-9A-Za-z]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=31536000$/);
    expect(res.headers['cache-control']).toBe('no-store');
    // The secret is never stored: Postgres holds its hash only.
    const secret = sessionCookieOf(set)!.split('=')[1]!;
    const sessions = await sessionsOf(env, body.person.id);
    expect(sessions).toHaveLength(1);
    expect(JSON.stringify(sessions)).not.toContain(secret);
  });

  it('marks the cookie Secure when BASE_URL is https', () => {
    const config = configWith({ BASE_URL: 'https://agent.example.com' });
    expect(sessionCookie(config, 'x')).toMatch(/; Secure$/);
  });

  it('answers a wrong password and an unknown address the same way: status, body and headers', async ({ env }) => {
    const who = await signedIn(env);
    const wrong = await signInRequest(env, { email: who.email, password: 'not the password at all' });
    const unknown = await signInRequest(env, { email: freshEmail('nobody'), password: 'not the password at all' });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Email or password is wrong.' });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const shape = (h: Record<string, string>) =>
      Object.keys(h)
        .filter((k) => !['date', 'content-length', 'etag'].includes(k))
        .sort();
    expect(shape(wrong.headers)).toEqual(shape(unknown.headers));
    expect(wrong.headers['content-length']).toBe(unknown.headers['content-length']);
  });

  it('makes a new session at every sign-in, and ends the one the browser held before', async ({ env }) => {
    const who = await signedIn(env);
    const again = await signInAs(env, who);
    expect(again.cookie).not.toBe(who.cookie);
    expect(again.csrfToken).not.toBe(who.csrfToken);
    const fromSameBrowser = await signInRequest(env, { email: who.email, password: who.password }).set('Cookie', again.cookie);
    expect(fromSameBrowser.status).toBe(200);
    expect(sessionCookieOf(fromSameBrowser.headers['set-cookie'])).not.toBe(again.cookie);
    expect((await again.request('get', '/dashboard/api/session')).status).toBe(401);
    expect((await who.request('get', '/dashboard/api/session')).status).toBe(200);
  });

  it('throttles failures per address with 429 and Retry-After, for an unknown address alike', async ({ env }) => {
    for (const email of [(await signedIn(env)).email, freshEmail('ghost')]) {
      const statuses: number[] = [];
      for (let i = 0; i < env.config.dashboard.signIn.addressFailures; i++)
        statuses.push((await signInRequest(env, { email, password: 'wrong password 123' })).status);
      expect(statuses.every((s) => s === 401)).toBe(true);
      const refused = await signInRequest(env, { email, password: PASSWORD });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(env.config.dashboard.signIn.windowSeconds);
    }
  });

  it('refuses a body without an address or password, naming the field', async ({ env }) => {
    const res = await signInRequest(env, { email: 'a@example.com' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^body\.password|^password/);
  });
});

describe('the session', () => {
  it('answers GET /dashboard/api/session while signed in, and 401 without a cookie or with an unknown one', async ({ env }) => {
    const who = await signedIn(env, { role: 'member' });
    const res = await who.request('get', '/dashboard/api/session');
    expect(res.status).toBe(200);
    expect(SessionView.parse(res.body)).toMatchObject({ person: { id: who.personId, role: 'member' }, csrfToken: who.csrfToken });
    expect((await env.api().get('/dashboard/api/session')).status).toBe(401);
    const forged = await env
      .api()
      .get('/dashboard/api/session')
      .set('Cookie', `gas_session=${'a'.repeat(43)}`);
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual({ error: 'Sign in to use the dashboard.' });
  });

  it('signs out: the cookie is cleared and the session no longer works', async ({ env }) => {
    const who = await signedIn(env);
    const out = await who.request('delete', '/dashboard/api/session');
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^gas_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
    expect((await who.request('get', '/dashboard/api/session')).status).toBe(401);
  });

  it('signs out everywhere: every session of the person ends, another person keeps theirs', async ({ env }) => {
    const who = await signedIn(env);
    const second = await signInAs(env, who);
    const colleague = await signedIn(env, { accountId: who.accountId, role: 'member' });
    expect((await second.request('post', '/dashboard/api/session/sign-out-everywhere')).status).toBe(204);
    expect((await who.request('get', '/dashboard/api/session')).status).toBe(401);
    expect((await second.request('get', '/dashboard/api/session')).status).toBe(401);
    expect((await colleague.request('get', '/dashboard/api/session')).status).toBe(200);
  });

  it('ends a session idle past DASHBOARD_SESSION_IDLE_MS or past its absolute end', async ({ env }) => {
    const idle = await signedIn(env);
    await agedSessions(env, idle.personId, { last_seen_at: Date.now() - env.config.dashboard.sessionIdleMs - 1 });
    expect((await idle.request('get', '/dashboard/api/session')).status).toBe(401);
    const old = await signedIn(env);
    await expiredRows(env, 'dashboard_sessions', { person_id: old.personId });
    expect((await old.request('get', '/dashboard/api/session')).status).toBe(401);
  });
});

describe('the dashboard door', () => {
  it('refuses a bearer token on a dashboard route, even beside a good cookie', async ({ env }) => {
    const { token } = await env.tenant();
    const who = await signedIn(env);
    for (const res of [
      await env.api().get('/dashboard/api/session').set(auth(token)),
      await who.request('get', '/dashboard/api/session').set(auth(token)),
      await env.api().get('/dashboard/api/v1/me').set(auth(token)),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'The dashboard takes a session cookie, not a bearer token.' });
    }
  });

  it('refuses the session cookie on /api/v1: the usual 401', async ({ env }) => {
    const who = await signedIn(env);
    const res = await env.api().get('/api/v1/me').set('Cookie', who.cookie);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized' });
  });

  it('refuses a write with no Origin or Referer, another Origin, or no or a wrong CSRF token', async ({ env }) => {
    const who = await signedIn(env);
    const path = '/dashboard/api/session/sign-out-everywhere';
    const cases = [
      env.api().post(path).set('Cookie', who.cookie).set('X-CSRF-Token', who.csrfToken),
      env.api().post(path).set('Cookie', who.cookie).set('X-CSRF-Token', who.csrfToken).set('Origin', 'https://evil.example'),
      env.api().post(path).set('Cookie', who.cookie).set('X-CSRF-Token', who.csrfToken).set('Origin', 'null'),
      env.api().post(path).set('Cookie', who.cookie).set('X-CSRF-Token', who.csrfToken).set('Referer', 'https://evil.example/page'),
      env.api().post(path).set('Cookie', who.cookie).set('Origin', dashboardOrigin(env)),
      env.api().post(path).set('Cookie', who.cookie).set('Origin', dashboardOrigin(env)).set('X-CSRF-Token', 'x'.repeat(32)),
    ];
    for (const req of cases) {
      const res = await req;
      expect(res.status).toBe(403);
      expect(res.body).toEqual(OTHER_SITE);
    }
    // None of them signed anyone out; the page's own request does.
    expect((await who.request('get', '/dashboard/api/session')).status).toBe(200);
    const referer = await env
      .api()
      .post(path)
      .set('Cookie', who.cookie)
      .set('X-CSRF-Token', who.csrfToken)
      .set('Referer', `${dashboardOrigin(env)}/dashboard/`);
    expect(referer.status).toBe(204);
  });

  it('checks the Origin rule on sign-in too', async ({ env }) => {
    const who = await signedIn(env);
    const res = await env
      .api()
      .post('/dashboard/api/session')
      .set('Origin', 'https://evil.example')
      .send({ email: who.email, password: who.password });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(OTHER_SITE);
  });

  it('mounts /api/v1 under /dashboard/api/v1 with the session: the person acts with every scope', async ({ env }) => {
    const who = await signedIn(env, { role: 'member' });
    const res = await who.request('get', '/dashboard/api/v1/me');
    expect(res.status).toBe(200);
    expect(res.body.me.tokenId).toMatch(/^ses_/);
    expect(res.body.me.account.id).toBe(who.accountId);
    expect(res.headers['ratelimit-limit']).toBeDefined();
  });
});
