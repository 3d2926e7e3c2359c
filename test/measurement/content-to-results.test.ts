import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import type { Scope } from '../../src/tokens/tokens.types.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';

/**
 * The Content API and Measurement end to end, with nothing called directly: the agent drafts a blog post (offline brain, through
 * POST /agent/messages), a person approves it, the Content API lists it to a website's content:read
 * token; a reader follows a tracked link in it and the website's server reports a conversion with that
 * `gvid`; /results counts the visit and the conversion under seo. A mail's tracked link counts under email.
 */
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), AGENT_WAIT_POLL_MS: '100' },
  pools: ['agent-turns', 'shipments', 'maintenance'],
}));

const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
const DEMO = 'https://www.acme-freight.test/demo?ref=blog';

const PERSON = ['agent:message', 'review:read', 'review:write', 'results:read'] as const;

/** A token for one of the account's servers, with only the scopes it needs. */
const mint = (env: TestEnv, accountId: string, scopes: Scope[]) =>
  mintToken(env.deps.db, env.deps.config.tokenPrefix, { accountId, label: 'website', scopes });

async function say(env: TestEnv, token: string, text: string): Promise<void> {
  const res = await env.api().post('/api/v1/agent/messages').set(auth(token)).send({ text, waitSeconds: 10 });
  expect(res.status).toBe(200);
  expect(res.body.message.status).toBe('replied');
}

async function waitingCard(env: TestEnv, token: string, sourceType: string) {
  const res = await env.api().get('/api/v1/review').set(auth(token));
  expect(res.status).toBe(200);
  const card = (res.body.items as { id: string; sourceType: string }[]).find((c) => c.sourceType === sourceType);
  expect(card).toBeTruthy();
  return card!;
}

async function results(env: TestEnv, token: string) {
  const res = await env.api().get('/api/v1/results').set(auth(token));
  expect(res.status).toBe(200);
  return ResultsResponse.parse(res.body).results;
}

/** Follows a tracked link as a browser would: 302 to the destination with the visit id. */
async function follow(env: TestEnv, link: string): Promise<{ location: URL; gvid: string }> {
  const res = await env.api().get(new URL(link).pathname).set('User-Agent', BROWSER).set('Accept-Language', 'en-GB');
  expect(res.status).toBe(302);
  const location = new URL(res.headers.location!);
  const gvid = location.searchParams.get('gvid');
  expect(gvid).toMatch(/^vis_/);
  return { location, gvid: gvid! };
}

describe('from a blog post to /results', () => {
  it('the agent drafts a post, a person approves it, the Content API lists it, a visit and a conversion count under seo', async ({
    env,
  }) => {
    const person = await env.tenant([...PERSON]);
    const { token: siteToken } = await mint(env, person.accountId, ['content:read']);
    const { token: serverToken } = await mint(env, person.accountId, ['measurement:write']);

    await say(env, person.token, `write a blog post about freight quote automation linking to ${DEMO}`);
    const card = await waitingCard(env, person.token, 'blog_post');
    // Nothing is published before a person approves.
    expect((await env.api().get('/api/v1/content/posts').set(auth(siteToken))).body.posts).toEqual([]);
    const approved = await env.api().post(`/api/v1/review/${card.id}/answer`).set(auth(person.token)).send({ action: 'approve' });
    expect(approved.status).toBe(200);
    // A retried approve never publishes twice.
    expect((await env.api().post(`/api/v1/review/${card.id}/answer`).set(auth(person.token)).send({ action: 'approve' })).status).toBe(409);

    const list = await env.api().get('/api/v1/content/posts').set(auth(siteToken));
    expect(list.status).toBe(200);
    expect(list.body.posts).toHaveLength(1);
    const post = list.body.posts[0];
    expect(post).toMatchObject({ title: expect.stringMatching(/freight quote automation/i), tags: expect.any(Array) });
    expect(post.markdown).toContain(DEMO);
    const one = await env.api().get(`/api/v1/content/posts/${post.slug}`).set(auth(siteToken));
    expect(one.status).toBe(200);
    expect(one.body.post).toEqual(post);
    // The website's token reads content and nothing else.
    expect((await env.api().get('/api/v1/review').set(auth(siteToken))).status).toBe(403);

    const link = /href="(http[^"]+\/l\/[0-9A-Za-z]+)"/.exec(post.html)?.[1];
    expect(link).toBeTruthy();
    const { location, gvid } = await follow(env, link!);
    expect(`${location.origin}${location.pathname}`).toBe('https://www.acme-freight.test/demo');
    expect(location.searchParams.get('ref')).toBe('blog');

    const events = await env
      .api()
      .post('/api/v1/measurement/events')
      .set(auth(serverToken))
      .send({
        events: [{ eventId: 'order-1001', name: 'purchase', visitId: gvid, occurredAt: Date.now() - 1_000, value: 120, currency: 'USD' }],
      });
    expect(events.status).toBe(200);
    expect(events.body).toEqual({ events: [{ eventId: 'order-1001', outcome: 'accepted' }] });

    const seo = await until(async () => {
      const r = (await results(env, person.token)).seo;
      return r.available && r.data.window.conversions === 1 ? r.data.window : null;
    }, 15_000);
    expect(seo).toMatchObject({ postsPublished: 1, visits: 1, conversions: 1, conversionValue: { USD: 120 } });
    const r = await results(env, person.token);
    for (const other of ['social', 'aeo'] as const) expect(r[other]).toMatchObject({ available: true, data: { window: { visits: 0 } } });
  });

  it("an email's tracked link counts a click and its conversion under email", async ({ env, smtp }) => {
    const person = await env.tenant([...PERSON]);
    const { token: serverToken } = await mint(env, person.accountId, ['measurement:write']);
    await upsertLead(env.deps.db, person.accountId, { domain: 'acme.test', contacts: [{ name: 'Jane Doe', email: 'jane@acme.test' }] });

    await say(env, person.token, `draft an email to jane@acme.test about a faster quote desk linking to ${DEMO}`);
    const card = await waitingCard(env, person.token, 'mail_draft');
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(person.token)).send({})).status).toBe(200);
    const sent = await simpleParser(smtp.received.at(-1)!.raw);
    const link = /(https?:\/\/\S+\/l\/[0-9A-Za-z]+)/.exec(sent.text ?? '')?.[1];
    expect(link).toBeTruthy();
    expect(sent.text).not.toContain(DEMO);

    // A mail gateway's scanner follows it first: counted apart, not as a click.
    const scan = await env.api().head(new URL(link!).pathname);
    expect(scan.status).toBe(302);
    const { gvid } = await follow(env, link!);
    const events = await env
      .api()
      .post('/api/v1/measurement/events')
      .set(auth(serverToken))
      .send({ events: [{ eventId: 'signup-7', name: 'sign_up', visitId: gvid, occurredAt: Date.now() - 500 }] });
    expect(events.body.events[0].outcome).toBe('accepted');

    const email = await until(async () => {
      const r = (await results(env, person.token)).email;
      return r.available && r.data.window.conversions === 1 ? r.data.window : null;
    }, 15_000);
    expect(email).toMatchObject({ sent: 1, clicks: 1, scannerClicks: 1, conversions: 1, conversionValue: {} });
  });
});
