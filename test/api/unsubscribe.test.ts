import { describe, expect } from 'vitest';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { getLead } from '../../src/leads/leads.service.js';
import { redactUrl } from '../../src/logger.js';
import { unsubscribeUrl } from '../../src/mail/outbound.js';
import { sentThread } from '../helpers/sent-thread.js';
import { getResults } from '../helpers/scoreboard.js';
import { buildCard, buildLead, buildThread } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

// One-click unsubscribe (RFC 8058): GET /u/{token} shows a page, POST unsubscribes, no login.

let env: TestEnv;
it.override('options', { env: { BASE_URL: 'https://agent.example.test' } });
it.beforeAll(({ env: e }) => {
  env = e;
});

const ONE_CLICK = 'List-Unsubscribe=One-Click';

async function world(status = 'contacted') {
  const { accountId } = await env.tenant();
  const lead = await buildLead(env.deps.db, accountId, { domain: 'acme.test', status, contacts: [{ email: 'jane@acme.test' }] });
  const thread = await buildThread(env.deps.db, accountId, { leadId: lead.id, to: 'jane@acme.test' });
  return { accountId, leadId: lead.id, thread, path: `/u/${thread.replyToken}` };
}

const optOutEvents = (accountId: string) => rows(env, 'channel_events', { account_id: accountId, channel: 'email', type: 'opt_out' });
const blockRows = (accountId: string) => rows(env, 'blocklist_entries', { account_id: accountId, value: 'jane@acme.test' });
const oneClick = (path: string) => env.api().post(path).type('form').send(ONE_CLICK);
/** What a browser sends: it asks for a page, which every other client (a mail client's one-click POST, a script) never gets. */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

function expectPageHeaders(res: { headers: Record<string, string> }) {
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['x-robots-tag']).toMatch(/noindex/);
  expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  expect(res.headers['content-security-policy']).toContain("form-action 'self'");
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

describe('GET /u/{token}', () => {
  it('shows a plain confirmation page with the address masked and a POST form, and changes nothing', async () => {
    const { accountId, leadId, path } = await world();
    const res = await env.api().get(path).set('Accept', BROWSER);
    expect(res.status).toBe(200);
    expectPageHeaders(res);
    expect(res.text).toContain('j***@acme.test');
    expect(res.text).not.toContain('jane@acme.test');
    expect(res.text).toMatch(/<form method="post">/);
    expect(res.text).toMatch(/<button type="submit">Unsubscribe<\/button>/);
    expect(res.text).not.toMatch(/<script|<link|<img|<iframe/i);
    expect((await env.api().head(path)).status).toBe(200);
    expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
    expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('contacted');
    expect(await optOutEvents(accountId)).toHaveLength(0);
  });

  it('escapes what it shows', async () => {
    const { accountId } = await env.tenant();
    const thread = await buildThread(env.deps.db, accountId, { to: '"<b>x</b>"@acme.test' });
    const res = await env.api().get(`/u/${thread.replyToken}`).set('Accept', BROWSER);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('<b>');
    expect(res.text).toContain('&quot;***@acme.test');
  });
});

describe('POST /u/{token}', () => {
  it('unsubscribes on the RFC 8058 one-click POST: blocked as opt_out_reply, lead unsubscribed, counted once after two POSTs', async () => {
    const { accountId, leadId, path } = await world();
    // The page's own form, from a browser: the answer is a page.
    const first = await oneClick(path).set('Accept', BROWSER);
    expect(first.status).toBe(200);
    expectPageHeaders(first);
    expect(first.text).toContain('You are unsubscribed');
    expect(first.text).toContain('j***@acme.test');
    const again = await oneClick(path).set('Accept', BROWSER);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(await blockRows(accountId)).toEqual([expect.objectContaining({ source: 'opt_out_reply' })]);
    expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('unsubscribed');
    expect(await optOutEvents(accountId)).toHaveLength(1);
    const r = await getResults(env.deps.db, accountId, undefined);
    if (!r.email.available) throw new Error('email results not available');
    expect(r.email.data.window).toMatchObject({ optOuts: 1 });
  });

  it("unsubscribes from the page's own form and from RFC 8058's multipart form", async () => {
    const a = await world();
    expect((await env.api().post(a.path).type('form').send({ 'List-Unsubscribe': 'One-Click' })).status).toBe(200);
    expect(await isBlocked(env.deps.db, a.accountId, 'jane@acme.test')).toBe(true);
    const b = await world();
    expect((await env.api().post(b.path).field('List-Unsubscribe', 'One-Click')).status).toBe(200);
    expect(await isBlocked(env.deps.db, b.accountId, 'jane@acme.test')).toBe(true);
  });

  it('refuses an empty POST, or any body but List-Unsubscribe=One-Click, with a 400 page, changing nothing', async () => {
    const { accountId, leadId, path } = await world();
    const bodies: [string, string | undefined][] = [
      ['', undefined],
      ['', 'application/x-www-form-urlencoded'],
      ['List-Unsubscribe=Yes', 'application/x-www-form-urlencoded'],
      ['One-Click', 'text/plain'],
      ['{"List-Unsubscribe":"One-Click"}', 'application/json'],
    ];
    for (const [body, type] of bodies) {
      const req = env.api().post(path);
      if (type) req.set('Content-Type', type);
      const res = await req.send(body);
      expect(res.status, `${type}: ${body}`).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: 'body must be List-Unsubscribe=One-Click (RFC 8058)' });
    }
    expect((await env.api().post(path).field('List-Unsubscribe', 'Later')).status).toBe(400);
    expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
    expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('contacted');
    expect(await optOutEvents(accountId)).toHaveLength(0);
  });

  it('applies concurrent POSTs of one link once', async () => {
    const { accountId, leadId, path } = await world();
    const results = await Promise.all(Array.from({ length: 20 }, () => oneClick(path)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await blockRows(accountId)).toHaveLength(1);
    expect(await optOutEvents(accountId)).toHaveLength(1);
    expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('unsubscribed');
  });

  it("touches only the token's own account", async () => {
    const mine = await world();
    const theirs = await world();
    expect((await oneClick(mine.path)).status).toBe(200);
    expect(await isBlocked(env.deps.db, mine.accountId, 'jane@acme.test')).toBe(true);
    expect(await isBlocked(env.deps.db, theirs.accountId, 'jane@acme.test')).toBe(false);
    expect((await getLead(env.deps.db, theirs.accountId, theirs.leadId)).status).toBe('contacted');
  });

  it('works on the URL a shipped mail carries (BASE_URL/u/{token}), with no login', async () => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'max@acme.test', draft: { subject: 'one-click', body: 'Hi' } },
    });
    const sent = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(sent.status).toBe(200);
    const thread = (await sentThread(env.deps.db, env.config, sent.body.sendId))!;
    const url = new URL(unsubscribeUrl(env.deps.config, thread.replyToken));
    expect(url.origin).toBe('https://agent.example.test');
    expect((await oneClick(url.pathname)).status).toBe(200);
    expect(await isBlocked(env.deps.db, accountId, 'max@acme.test')).toBe(true);
  });
});

describe('refusals', () => {
  it('answers an unknown or malformed token, and /u itself, with the JSON 404; a browser gets it as a page', async () => {
    for (const path of ['/u/abcdefghijklmnopqrstuvwxyz', '/u/short', '/u/has%20space%20in%20it%20xxxxxxxx', '/u', '/u/a/b']) {
      const get = await env.api().get(path);
      expect(get.status, path).toBe(404);
      expect(get.headers['content-type'], path).toMatch(/^application\/json/);
      expect(get.body, path).toEqual({ error: 'not found' });
      const page = await env.api().get(path).set('Accept', BROWSER);
      expect(page.status, path).toBe(404);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('Link not found');
    }
    const post = await oneClick('/u/abcdefghijklmnopqrstuvwxyz');
    expect(post.status).toBe(404);
    expect(post.body).toEqual({ error: 'not found' });
  });

  it('answers a script or mail client in JSON: the confirmation, the one-click result', async () => {
    const { path } = await world();
    const shown = await env.api().get(path);
    expect(shown.status).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(shown.body).toEqual({ to: 'j***@acme.test', unsubscribe: 'POST this URL with the body List-Unsubscribe=One-Click' });
    const done = await oneClick(path);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ ok: true, to: 'j***@acme.test' });
  });

  it('answers other methods with 405 and Allow, changing nothing', async () => {
    const { accountId, path } = await world();
    for (const method of ['put', 'patch', 'delete'] as const) {
      const res = await env.api()[method](path);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      expect(res.body).toEqual({ error: 'method not allowed' });
    }
    expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
  });

  it('refuses a body over 1 KB with 413, changing nothing', async () => {
    const { accountId, path } = await world();
    const res = await env
      .api()
      .post(path)
      .type('form')
      .send(`${ONE_CLICK}&pad=${'x'.repeat(1100)}`);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'request too large' });
    expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
  });

  it('answers a token that cannot be percent-decoded with the JSON 404, as /l/ does', async () => {
    for (const path of ['/u/%ZZ', '/u/%', '/l/%ZZ', '/l/%']) {
      for (const res of [await env.api().get(path), await env.api().post(path).type('form').send(ONE_CLICK)]) {
        expect(res.status, path).toBe(404);
        expect(res.headers['content-type'], path).toMatch(/^application\/json/);
        expect(res.body, path).toEqual({ error: expect.any(String) });
      }
    }
  });

  it('keeps the token out of logged URLs', () => {
    expect(redactUrl('/u/abcdefghijklmnopqrstuvwxyz')).toBe('/u/[redacted]');
    expect(redactUrl('/u/abcdefghijklmnopqrstuvwxyz?x=1')).toBe('/u/[redacted]?x=1');
  });
});
