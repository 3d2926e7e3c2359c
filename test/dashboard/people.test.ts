import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { PeopleList } from '../../api/dashboard/people.schemas.js';
import { SessionView } from '../../api/dashboard/session.schemas.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { SCOPES } from '../../src/tokens/tokens.types.js';
import { auth } from '../helpers/auth.js';
import { dashboardOrigin, freshEmail, PASSWORD, sessionCookieOf, signedIn, signInRequest } from '../helpers/dashboard.js';
import { adminCall, type TestEnv } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { expiredRows } from '../helpers/aged-rows.js';
import { until } from '../helpers/processes.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';

it.override('options', ({ smtp }) => ({ env: { ...smtpEnv(smtp), MAIL_FROM: 'Growth Agent <agent@growthco.example>' } }));

/** The text of the first mail the stand-in took for `to`, waited for. */
async function mailTo(smtp: TestSmtp, to: string): Promise<{ subject: string; text: string; from: string }> {
  const raw = await until(async () => smtp.received.find((m) => m.to.includes(to))?.raw);
  const parsed = await simpleParser(raw);
  return { subject: parsed.subject ?? '', text: parsed.text ?? '', from: parsed.from?.text ?? '' };
}

const tokenOf = (text: string, kind: 'invitations' | 'password-resets') => {
  const m = new RegExp(`/dashboard/${kind}/([0-9A-Za-z]{43})`).exec(text);
  if (!m) throw new Error(`no ${kind} link in ${text}`);
  return m[1]!;
};

const accept = (env: TestEnv, token: string, body: unknown) =>
  env
    .api()
    .post(`/dashboard/api/invitations/${token}/accept`)
    .set('Origin', dashboardOrigin(env))
    .send(body as object);

describe('invitations', () => {
  it('an owner invites an address; the link is mailed (never answered), and accepting it signs the new person in', async ({
    env,
    smtp,
  }) => {
    const owner = await signedIn(env, { name: 'Olga Owner' });
    const email = freshEmail('new');
    const made = await owner.request('post', '/dashboard/api/people/invitations', { email, role: 'member' });
    expect(made.status).toBe(201);
    expect(made.body.invitation).toMatchObject({ email, role: 'member' });
    expect(JSON.stringify(made.body)).not.toMatch(/dashboard\/invitations/);

    const mail = await mailTo(smtp, email);
    expect(mail.from).toContain('agent@growthco.example');
    expect(mail.text).toContain('Olga Owner invited you');
    const token = tokenOf(mail.text, 'invitations');

    const view = await env.api().get(`/dashboard/api/invitations/${token}`);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({ email, accountName: 'Acme', role: 'member' });

    expect((await accept(env, token, { name: 'Nia New', password: 'short' })).status).toBe(400);
    const res = await accept(env, token, { name: 'Nia New', password: PASSWORD });
    expect(res.status).toBe(200);
    expect(SessionView.parse(res.body)).toMatchObject({
      person: { email, name: 'Nia New', role: 'member' },
      account: { id: owner.accountId },
    });
    const cookie = sessionCookieOf(res.headers['set-cookie']);
    expect((await env.api().get('/dashboard/api/session').set('Cookie', cookie!)).status).toBe(200);

    // Single use: the link is spent, and the new person signs in with the password they chose.
    expect((await env.api().get(`/dashboard/api/invitations/${token}`)).status).toBe(404);
    expect((await accept(env, token, { name: 'Again', password: PASSWORD })).status).toBe(404);
    expect((await signInRequest(env, { email, password: PASSWORD })).status).toBe(200);
    const people = PeopleList.parse((await owner.request('get', '/dashboard/api/people')).body);
    expect(people.items.map((p) => p.email).sort()).toEqual([owner.email, email].sort());
    expect(people.invitations).toEqual([]);
  });

  it('lists open invitations, withdraws one (its link then answers 404), and refuses an expired link', async ({ env, smtp }) => {
    const owner = await signedIn(env);
    const email = freshEmail('later');
    const made = await owner.request('post', '/dashboard/api/people/invitations', { email, role: 'owner' });
    const token = tokenOf((await mailTo(smtp, email)).text, 'invitations');
    const listed = PeopleList.parse((await owner.request('get', '/dashboard/api/people')).body);
    expect(listed.invitations).toEqual([made.body.invitation]);
    expect((await owner.request('delete', `/dashboard/api/people/invitations/${made.body.invitation.id}`)).status).toBe(204);
    expect((await env.api().get(`/dashboard/api/invitations/${token}`)).status).toBe(404);
    expect((await owner.request('delete', `/dashboard/api/people/invitations/${made.body.invitation.id}`)).status).toBe(404);

    const other = freshEmail('expired');
    await owner.request('post', '/dashboard/api/people/invitations', { email: other, role: 'member' });
    const expired = tokenOf((await mailTo(smtp, other)).text, 'invitations');
    await expiredRows(env, 'person_invitations', { email: other });
    expect((await accept(env, expired, { name: 'Late', password: PASSWORD })).status).toBe(404);
  });

  it('refuses an address already in the account (409) and a bad address or role (400, naming the field)', async ({ env }) => {
    const owner = await signedIn(env);
    expect((await owner.request('post', '/dashboard/api/people/invitations', { email: owner.email, role: 'member' })).status).toBe(409);
    const bad = await owner.request('post', '/dashboard/api/people/invitations', { email: 'nope', role: 'member' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^email /);
    const role = await owner.request('post', '/dashboard/api/people/invitations', { email: freshEmail(), role: 'admin' });
    expect(role.status).toBe(400);
    expect(role.body.error).toMatch(/role/);
  });

  it('accepting with an address that already signs in elsewhere is refused to its holder', async ({ env, smtp }) => {
    const elsewhere = await signedIn(env);
    const owner = await signedIn(env);
    await owner.request('post', '/dashboard/api/people/invitations', { email: elsewhere.email, role: 'member' });
    const token = tokenOf((await mailTo(smtp, elsewhere.email)).text, 'invitations');
    const res = await accept(env, token, { name: 'Twice', password: PASSWORD });
    expect(res.status).toBe(409);
  });

  it('`admin person invite` prints the invitation and its one-time link, which works', async ({ env }) => {
    const { accountId } = await env.tenant();
    const email = freshEmail('first');
    const { out, error } = await adminCall(env, ['person', 'invite', '--account', accountId, '--email', email, '--role', 'owner']);
    expect(error).toBeUndefined();
    expect(out).toEqual({
      invitation: { id: expect.stringMatching(/^inv_/), email, role: 'owner', expiresAt: expect.any(Number) },
      link: expect.stringMatching(new RegExp(`^${env.config.baseUrl}/dashboard/invitations/[0-9A-Za-z]{43}$`)),
    });
    const token = String(out!.link).split('/').at(-1)!;
    const res = await accept(env, token, { name: 'First Owner', password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.person.role).toBe('owner');
    expect((await adminCall(env, ['person', 'invite', '--account', accountId, '--email', freshEmail(), '--role', 'boss'])).error).toBe(
      '--role must be owner or member',
    );
  });
});

describe('people and roles', () => {
  it('a member reads the people list but gets 403 on every change', async ({ env }) => {
    const owner = await signedIn(env);
    const member = await signedIn(env, { accountId: owner.accountId, role: 'member' });
    expect((await member.request('get', '/dashboard/api/people')).status).toBe(200);
    const refused = [
      await member.request('post', '/dashboard/api/people/invitations', { email: freshEmail(), role: 'member' }),
      await member.request('delete', '/dashboard/api/people/invitations/inv_x'),
      await member.request('patch', `/dashboard/api/people/${owner.personId}`, { role: 'member' }),
      await member.request('delete', `/dashboard/api/people/${owner.personId}`),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/^Only an account owner can/);
    }
  });

  it('keeps the last owner: demoting or removing them is a 409; with a second owner it goes through', async ({ env }) => {
    const owner = await signedIn(env);
    const demote = await owner.request('patch', `/dashboard/api/people/${owner.personId}`, { role: 'member' });
    expect(demote.status).toBe(409);
    expect((await owner.request('delete', `/dashboard/api/people/${owner.personId}`)).status).toBe(409);
    const second = await signedIn(env, { accountId: owner.accountId, role: 'member' });
    const promoted = await owner.request('patch', `/dashboard/api/people/${second.personId}`, { role: 'owner' });
    expect(promoted.status).toBe(200);
    expect(promoted.body.person).toMatchObject({ id: second.personId, role: 'owner' });
    expect((await owner.request('patch', `/dashboard/api/people/${owner.personId}`, { role: 'member' })).status).toBe(200);
    // The demoted person's next owner-only call is refused at once: the role is read at every request.
    expect((await owner.request('post', '/dashboard/api/people/invitations', { email: freshEmail(), role: 'member' })).status).toBe(403);
  });

  it("cannot touch another account's people (404)", async ({ env }) => {
    const owner = await signedIn(env);
    const stranger = await signedIn(env);
    expect((await owner.request('delete', `/dashboard/api/people/${stranger.personId}`)).status).toBe(404);
    expect((await owner.request('patch', `/dashboard/api/people/${stranger.personId}`, { role: 'member' })).status).toBe(404);
  });

  it('removing a person ends their sessions and revokes the tokens they hold, and frees their address', async ({ env }) => {
    const owner = await signedIn(env);
    const member = await signedIn(env, { accountId: owner.accountId, role: 'member' });
    const held = await mintToken(env.deps.db, env.config.tokenPrefix, {
      accountId: owner.accountId,
      label: 'member laptop',
      scopes: [...SCOPES],
      personId: member.personId,
    });
    const operators = await mintToken(env.deps.db, env.config.tokenPrefix, {
      accountId: owner.accountId,
      label: 'ops',
      scopes: [...SCOPES],
    });
    expect((await env.api().get('/api/v1/me').set(auth(held.token))).status).toBe(200);

    expect((await owner.request('delete', `/dashboard/api/people/${member.personId}`)).status).toBe(204);
    expect((await member.request('get', '/dashboard/api/session')).status).toBe(401);
    expect((await env.api().get('/api/v1/me').set(auth(held.token))).status).toBe(401);
    expect((await env.api().get('/api/v1/me').set(auth(operators.token))).status).toBe(200);
    expect((await signInRequest(env, { email: member.email, password: member.password })).status).toBe(401);
    expect((await owner.request('delete', `/dashboard/api/people/${member.personId}`)).status).toBe(404);
  });

  it("audits every person's write with that person: `admin audit list` shows who", async ({ env }) => {
    const owner = await signedIn(env);
    const member = await signedIn(env, { accountId: owner.accountId, role: 'member' });
    await owner.request('patch', `/dashboard/api/people/${member.personId}`, { role: 'owner' });
    const blocked = await member.request('post', '/dashboard/api/v1/blocklist', { entries: [{ value: 'spam@example.com' }] });
    expect(blocked.status).toBeLessThan(300);
    const { out } = await adminCall(env, ['audit', 'list', '--account', owner.accountId]);
    const entries = out!.entries as Array<Record<string, unknown>>;
    expect(entries).toContainEqual(
      expect.objectContaining({
        actor: 'person',
        route: '/dashboard/api/people/{id}',
        method: 'PATCH',
        targetId: member.personId,
        personId: owner.personId,
        personEmail: owner.email,
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        actor: 'person',
        route: '/dashboard/api/v1/blocklist',
        method: 'POST',
        personId: member.personId,
        personEmail: member.email,
        tokenId: expect.stringMatching(/^ses_/),
      }),
    );
    // The session's id stands where a token's would: never the cookie's secret.
    expect(JSON.stringify(entries)).not.toContain(member.cookie.split('=')[1]);
  });
});
