import { describe, expect } from 'vitest';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../../src/tokens/tokens.types.js';
import { auth } from '../helpers/auth.js';
import { signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';
import { postJson } from '../webhooks/helpers.js';

// Settings over HTTP (docs/dashboard.md, "Settings"): the dashboard's routes answer with the token, hook,
// mail and approval services' own rules, limits and errors, as the admin CLI does.

it.override('options', { env: { BASE_URL: 'https://agent.example.com', MAIL_ALLOWED_FROM_DOMAINS: 'localhost,acme-sender.test' } });

const pathOf = (url: string) => new URL(url).pathname;
const ownerOnly = expect.stringMatching(/^Only an account owner can /);

describe('API tokens', () => {
  it('lists every scope with what it lets a token do, from the one list', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const res = await owner.request('get', '/dashboard/api/scopes');
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual(SCOPES.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })));
  });

  it('mints a token held by the person, whose secret works on /api/v1 and is shown once, never again', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner', name: 'Ana Lima' });
    const res = await owner.request('post', '/dashboard/api/tokens', { label: 'ci deploys', scopes: ['review:read', 'leads:read'] });
    expect(res.status).toBe(201);
    expect(res.body.token).toEqual({
      tokenId: expect.stringMatching(/^tok_/),
      label: 'ci deploys',
      scopes: ['review:read', 'leads:read'],
      createdAt: expect.any(Number),
      lastUsedAt: null,
      holder: { id: owner.personId, name: 'Ana Lima', email: owner.email },
    });
    const secret = res.body.secret as string;
    const me = await env.api().get('/api/v1/me').set(auth(secret));
    expect(me.status).toBe(200);
    expect(me.body.me).toMatchObject({ tokenId: res.body.token.tokenId, label: 'ci deploys', account: { id: owner.accountId } });

    const listed = await owner.request('get', '/dashboard/api/tokens');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((t: { tokenId: string }) => t.tokenId)).toContain(res.body.token.tokenId);
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(-20));
    const audit = await rows(env, 'audit_log', { account_id: owner.accountId, target_id: res.body.token.tokenId });
    expect(audit).toEqual([expect.objectContaining({ actor: 'person', person_id: owner.personId, person_email: owner.email })]);
    expect(JSON.stringify(audit)).not.toContain(secret.slice(-20));
  });

  it("shows a member their own tokens only and refuses them another's; an owner sees and revokes everyone's", async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const member = await signedIn(env, { role: 'member', accountId: owner.accountId });
    const ownerToken = (await owner.request('post', '/dashboard/api/tokens', { label: 'owner', scopes: [] })).body;
    const memberToken = (await member.request('post', '/dashboard/api/tokens', { label: 'member', scopes: ['agent:message'] })).body;
    const ids = (r: { body: { items: { tokenId: string }[] } }) => r.body.items.map((t) => t.tokenId).sort();
    expect(ids(await member.request('get', '/dashboard/api/tokens'))).toEqual([memberToken.token.tokenId]);
    expect(ids(await owner.request('get', '/dashboard/api/tokens'))).toEqual([ownerToken.token.tokenId, memberToken.token.tokenId].sort());

    expect((await member.request('delete', `/dashboard/api/tokens/${ownerToken.token.tokenId}`)).status).toBe(404);
    expect((await env.api().get('/api/v1/me').set(auth(ownerToken.secret))).status).toBe(200);
    expect((await owner.request('delete', `/dashboard/api/tokens/${memberToken.token.tokenId}`)).status).toBe(204);
    expect((await env.api().get('/api/v1/me').set(auth(memberToken.secret))).status).toBe(401);
    expect(ids(await member.request('get', '/dashboard/api/tokens'))).toEqual([]);
  });

  it('refuses a bad label or scope naming the field, and the 21st live token with the service’s error', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const post = (body: unknown) => owner.request('post', '/dashboard/api/tokens', body);
    expect((await post({ label: '  ', scopes: [] })).body).toEqual({ error: 'label must be 1 to 100 characters' });
    const bad = await post({ label: 'x', scopes: ['review:read', 'root'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^scopes has unknown scope root; scopes are review:read, /);
    expect((await post({ label: 'x' })).body).toEqual({ error: 'scopes is required' });
    expect(await rows(env, 'api_tokens', { account_id: owner.accountId })).toEqual([]);

    for (let i = 0; i < 19; i++)
      await mintToken(env.deps.db, env.config.tokenPrefix, { accountId: owner.accountId, label: `t${i}`, scopes: [] });
    expect((await post({ label: 'twentieth', scopes: [] })).status).toBe(201);
    // The operator's tokens (the admin CLI's mint) have no holder; the owner sees them with the rest.
    const holders = (await owner.request('get', '/dashboard/api/tokens')).body.items.map(
      (t: { holder: { id: string } | null }) => t.holder?.id ?? null,
    );
    expect(holders.filter((h: string | null) => h === null)).toHaveLength(19);
    expect(holders.filter((h: string | null) => h === owner.personId)).toHaveLength(1);
    const refused = await post({ label: 'twenty-first', scopes: [] });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: 'rejected', message: 'account already has 20 live tokens; revoke one before minting another' });
  });
});

describe('the settings routes behind the session router', () => {
  it('take no bearer token, and refuse a write without the CSRF token', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const minted = await owner.request('post', '/dashboard/api/tokens', { label: 'bearer', scopes: [] });
    const bearer = await env.api().get('/dashboard/api/tokens').set(auth(minted.body.secret));
    expect(bearer.status).toBe(401);
    expect(bearer.body).toEqual({ error: 'The dashboard takes a session cookie, not a bearer token.' });
    const forged = await env
      .api()
      .post('/dashboard/api/hooks')
      .set('Cookie', owner.cookie)
      .set('Origin', new URL(env.config.baseUrl).origin)
      .send({ label: 'forged' });
    expect(forged.status).toBe(403);
    expect((await owner.request('get', '/dashboard/api/hooks')).body.items).toEqual([]);
  });
});

describe('webhooks', () => {
  it('are for owners only: a member gets 403 on every hook route', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const member = await signedIn(env, { role: 'member', accountId: owner.accountId });
    const { body } = await owner.request('post', '/dashboard/api/hooks', { label: 'signup' });
    const calls: ['get' | 'post' | 'delete', string, unknown?][] = [
      ['get', '/dashboard/api/hooks'],
      ['post', '/dashboard/api/hooks', { label: 'mine' }],
      ['post', `/dashboard/api/hooks/${body.hook.id}/disable`],
      ['post', `/dashboard/api/hooks/${body.hook.id}/regenerate`],
      ['get', `/dashboard/api/hooks/${body.hook.id}/deliveries`],
      ['delete', `/dashboard/api/hooks/${body.hook.id}`],
    ];
    for (const [method, path, payload] of calls) {
      const res = await member.request(method, path, payload);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toEqual(ownerOnly);
    }
    expect((await postJson(env, pathOf(body.url), { still: 'live' })).status).toBe(202);
  });

  it('creates a hook whose URL is shown once; the log shows a POST to it; regenerate makes the old URL 404 at once; replay', async ({
    env,
  }) => {
    const owner = await signedIn(env, { role: 'owner' });
    expect((await owner.request('post', '/dashboard/api/hooks', { label: 'Sign Up' })).body).toEqual({
      error: 'label must be 1 to 32 characters of lowercase letters, digits, - and _',
    });
    const made = await owner.request('post', '/dashboard/api/hooks', { label: 'signup' });
    expect(made.status).toBe(201);
    expect(made.body.hook).toEqual({
      id: expect.stringMatching(/^hook_/),
      label: 'signup',
      enabled: true,
      createdAt: expect.any(Number),
      lastDeliveryAt: null,
    });
    expect(made.body.url).toMatch(/^https:\/\/agent\.example\.com\/api\/webhook\/hook\/whk_/);
    const id = made.body.hook.id as string;
    const token = pathOf(made.body.url).split('/').pop()!;

    const sent = await postJson(env, pathOf(made.body.url), { email: 'kim@initech.test' });
    expect(sent.status).toBe(202);
    const log = await owner.request('get', `/dashboard/api/hooks/${id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body).toEqual({
      items: [
        {
          id: sent.body.deliveryId,
          outcome: 'accepted',
          receivedAt: expect.any(Number),
          sizeBytes: '{"email":"kim@initech.test"}'.length,
          preview: '{"email":"kim@initech.test"}',
          replayOf: null,
          count: 1,
          lastAt: null,
          error: null,
        },
      ],
      nextCursor: null,
    });
    const listed = await owner.request('get', '/dashboard/api/hooks');
    expect(listed.body.items).toEqual([expect.objectContaining({ id, enabled: true, lastDeliveryAt: expect.any(Number) })]);
    expect(JSON.stringify([listed.body, log.body])).not.toContain(token.slice(4));

    const replay = await owner.request('post', `/dashboard/api/hooks/${id}/deliveries/${sent.body.deliveryId}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ deliveryId: expect.stringMatching(/^dlv_/), replayOf: sent.body.deliveryId });
    const accepted = await owner.request('get', `/dashboard/api/hooks/${id}/deliveries?outcome=accepted&limit=1`);
    expect(accepted.body.items[0]).toMatchObject({ id: replay.body.deliveryId, replayOf: sent.body.deliveryId });
    expect(accepted.body.nextCursor).toEqual(expect.any(String));
    expect((await owner.request('get', `/dashboard/api/hooks/${id}/deliveries?outcome=sent`)).body.error).toMatch(
      /^outcome must be one of/,
    );

    const regenerated = await owner.request('post', `/dashboard/api/hooks/${id}/regenerate`);
    expect(regenerated.status).toBe(200);
    expect((await postJson(env, pathOf(made.body.url), { n: 1 })).status).toBe(404);
    expect((await postJson(env, pathOf(regenerated.body.url), { n: 2 })).status).toBe(202);

    expect((await owner.request('post', `/dashboard/api/hooks/${id}/disable`)).body.hook.enabled).toBe(false);
    expect((await postJson(env, pathOf(regenerated.body.url), { n: 3 })).status).toBe(404);
    expect((await owner.request('post', `/dashboard/api/hooks/${id}/enable`)).body.hook.enabled).toBe(true);
    expect((await postJson(env, pathOf(regenerated.body.url), { n: 4 })).status).toBe(202);
    expect((await owner.request('delete', `/dashboard/api/hooks/${id}`)).status).toBe(204);
    expect((await postJson(env, pathOf(regenerated.body.url), { n: 5 })).status).toBe(404);
    expect((await owner.request('get', `/dashboard/api/hooks/${id}/deliveries`)).status).toBe(404);
  });

  it("answers another account's hook as not found", async ({ env }) => {
    const a = await signedIn(env, { role: 'owner' });
    const b = await signedIn(env, { role: 'owner' });
    const { body } = await a.request('post', '/dashboard/api/hooks', { label: 'signup' });
    for (const path of [`/dashboard/api/hooks/${body.hook.id}/disable`, `/dashboard/api/hooks/${body.hook.id}/regenerate`]) {
      expect((await b.request('post', path)).status).toBe(404);
    }
    expect((await b.request('get', `/dashboard/api/hooks/${body.hook.id}/deliveries`)).status).toBe(404);
    expect((await postJson(env, pathOf(body.url), { ok: 1 })).status).toBe(202);
  });
});

describe('mail and approval settings', () => {
  it('shows the mail settings to anyone and lets only an owner change the From, refusing a bad one by field', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const member = await signedIn(env, { role: 'member', accountId: owner.accountId });
    const shown = await member.request('get', '/dashboard/api/settings/mail');
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      from: env.config.mail.from,
      dkim: { selector: null, record: null },
      inboundAddress: 'reply+<token>@localhost',
    });
    const denied = await member.request('patch', '/dashboard/api/settings/mail', { from: 'sales@acme-sender.test' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toEqual(ownerOnly);
    const bad = await owner.request('patch', '/dashboard/api/settings/mail', { from: 'eve@evil.test' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^from must be an address at a domain the operator allowed/);
    expect((await owner.request('patch', '/dashboard/api/settings/mail', {})).body).toEqual({ error: 'from is required' });
    const set = await owner.request('patch', '/dashboard/api/settings/mail', { from: 'Acme <sales@acme-sender.test>' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ from: 'Acme <sales@acme-sender.test>', dkim: { domain: 'acme-sender.test' } });
  });

  it('shows each kind of work with its mode and ladder; only an owner changes one, and spending always asks', async ({ env }) => {
    const owner = await signedIn(env, { role: 'owner' });
    const member = await signedIn(env, { role: 'member', accountId: owner.accountId });
    const shown = await member.request('get', '/dashboard/api/settings/approvals');
    expect(shown.status).toBe(200);
    expect(shown.body.items.find((i: { kind: string }) => i.kind === 'email')).toMatchObject({
      mode: 'trust_ladder',
      ladder: { state: 'climbing', approvedUnchanged: 0, words: expect.stringMatching(/^0 of \d+ approvals shipped unchanged/) },
    });
    expect((await member.request('patch', '/dashboard/api/settings/approvals/email', { mode: 'ship' })).status).toBe(403);
    expect((await owner.request('patch', '/dashboard/api/settings/approvals/spend', { mode: 'ship' })).body).toEqual({
      error: 'mode must be always_ask for spend: spending always waits for a person',
    });
    expect((await owner.request('patch', '/dashboard/api/settings/approvals/email', { mode: 'sometimes' })).body.error).toMatch(
      /^mode must be one of "always_ask", "trust_ladder", "ship"/,
    );
    expect((await owner.request('patch', '/dashboard/api/settings/approvals/faxes', { mode: 'ship' })).body.error).toMatch(
      /^kind must be one of/,
    );
    const set = await owner.request('patch', '/dashboard/api/settings/approvals/email', { mode: 'always_ask' });
    expect(set.status).toBe(200);
    expect(set.body.item).toMatchObject({ kind: 'email', mode: 'always_ask', ladder: { state: 'off' } });
  });
});
