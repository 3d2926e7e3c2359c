import { describe, expect } from 'vitest';
import { VisitResponse } from '../../api/routes/measurement.schemas.js';
import { newId } from '../../src/ids.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

// POST /api/v1/measurement/visits: a landing a customer's server reports, and the channel it came from.

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
let tenant: { accountId: string; token: string };
it.override('options', { env: { BASE_URL: BASE, RATE_WRITES_BURST: '10000', RATE_ACCOUNT_BURST: '10000' } });
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
});

const post = (env: TestEnv, body: unknown, token = tenant.token) =>
  env
    .api()
    .post('/api/v1/measurement/visits')
    .set(auth(token))
    .send(body as object);

const LANDING = 'https://www.acme.test/pricing';

/** [what, body, channel]: the channel rules' table, tried through the route. */
const TABLE: [string, Record<string, unknown>, string][] = [
  ['utm medium email', { utm: { medium: 'email', source: 'google' } }, 'email'],
  ['utm medium Email (case)', { utm: { medium: 'Email' } }, 'email'],
  ['utm medium cpc', { utm: { medium: 'cpc', source: 'google' } }, 'ads'],
  ['utm medium ppc', { utm: { medium: 'ppc' } }, 'ads'],
  ['utm medium paid', { utm: { medium: 'paid' } }, 'ads'],
  ['utm medium paidsearch', { utm: { medium: 'paidsearch' } }, 'ads'],
  ['utm medium display', { utm: { medium: 'display' } }, 'ads'],
  ['utm medium social', { utm: { medium: 'social', source: 'chatgpt' } }, 'social'],
  ['utm medium social-media', { utm: { medium: 'social-media' } }, 'social'],
  ['utm medium organic', { utm: { medium: 'organic' } }, 'seo'],
  ['utm source chatgpt.com (as ChatGPT tags links)', { utm: { source: 'chatgpt.com' } }, 'aeo'],
  ['utm source perplexity', { utm: { source: 'perplexity' } }, 'aeo'],
  ['utm source linkedin', { utm: { source: 'linkedin', medium: 'post' } }, 'social'],
  ['utm source bing', { utm: { source: 'bing' } }, 'seo'],
  ['utm beats the referrer', { utm: { medium: 'email' }, referrer: 'https://www.google.com/' }, 'email'],
  ['utm in the url when utm is absent', { url: `${LANDING}?utm_source=newsletter&utm_medium=email` }, 'email'],
  [
    'unknown utm falls through to the referrer',
    { utm: { source: 'partner-x', medium: 'banana' }, referrer: 'https://duckduckgo.com/' },
    'seo',
  ],
  ['chatgpt.com', { referrer: 'https://chatgpt.com/' }, 'aeo'],
  ['chat.openai.com', { referrer: 'https://chat.openai.com/c/123' }, 'aeo'],
  ['perplexity.ai', { referrer: 'https://www.perplexity.ai/search?q=x' }, 'aeo'],
  ['gemini.google.com (not Google search)', { referrer: 'https://gemini.google.com/app' }, 'aeo'],
  ['copilot.microsoft.com', { referrer: 'https://copilot.microsoft.com/' }, 'aeo'],
  ['claude.ai', { referrer: 'https://claude.ai/chat/1' }, 'aeo'],
  ['you.com', { referrer: 'https://you.com/search?q=x' }, 'aeo'],
  ['phind.com', { referrer: 'https://www.phind.com/' }, 'aeo'],
  ['google.com', { referrer: 'https://www.google.com/' }, 'seo'],
  ['google.co.uk', { referrer: 'https://www.google.co.uk/' }, 'seo'],
  ['google.de', { referrer: 'https://google.de/' }, 'seo'],
  ['bing.com', { referrer: 'https://www.bing.com/search?q=x' }, 'seo'],
  ['duckduckgo.com', { referrer: 'https://duckduckgo.com/' }, 'seo'],
  ['search.yahoo.com', { referrer: 'https://search.yahoo.com/' }, 'seo'],
  ['baidu.com', { referrer: 'https://www.baidu.com/' }, 'seo'],
  ['yandex.ru', { referrer: 'https://yandex.ru/search' }, 'seo'],
  ['ecosia.org', { referrer: 'https://www.ecosia.org/search' }, 'seo'],
  ['search.brave.com', { referrer: 'https://search.brave.com/search' }, 'seo'],
  ['facebook.com', { referrer: 'https://m.facebook.com/' }, 'social'],
  ['l.instagram.com', { referrer: 'https://l.instagram.com/' }, 'social'],
  ['t.co', { referrer: 'https://t.co/abc' }, 'social'],
  ['twitter.com', { referrer: 'https://twitter.com/' }, 'social'],
  ['x.com', { referrer: 'https://x.com/someone' }, 'social'],
  ['linkedin.com', { referrer: 'https://www.linkedin.com/feed/' }, 'social'],
  ['lnkd.in', { referrer: 'https://lnkd.in/abc' }, 'social'],
  ['reddit.com', { referrer: 'https://old.reddit.com/r/x' }, 'social'],
  ['youtube.com', { referrer: 'https://www.youtube.com/' }, 'social'],
  ['news.ycombinator.com', { referrer: 'https://news.ycombinator.com/item?id=1' }, 'social'],
  ['threads.net', { referrer: 'https://www.threads.net/' }, 'social'],
  ['bsky.app', { referrer: 'https://bsky.app/profile/x' }, 'social'],
  ['mastodon.social', { referrer: 'https://mastodon.social/@x' }, 'social'],
  ['another site', { referrer: 'https://blog.partner.test/post' }, 'referral'],
  ['a lookalike of x.com', { referrer: 'https://dropbox.com/' }, 'referral'],
  ['the site itself', { referrer: 'https://www.acme.test/' }, 'direct'],
  ['an empty referrer', { referrer: '' }, 'direct'],
  ['a referrer that is not a URL', { referrer: 'android-app://com.x' }, 'direct'],
  ['nothing', {}, 'direct'],
];

describe('POST /measurement/visits: the channel table', () => {
  it.for(TABLE)('%s → %s', async ([_what, extra, channel], { env }) => {
    const res = await post(env, { url: LANDING, ...extra });
    expect(res.status).toBe(201);
    const body = VisitResponse.parse(res.body);
    expect(body.channel).toBe(channel);
    expect(body.visitId).toMatch(/^vis_\w{20}$/);
    const visit = await row(env, 'visits', { id: body.visitId });
    expect(visit).toMatchObject({ account_id: tenant.accountId, channel, via: 'reported', bot: false, ua_hash: null });
    const events = await rows(env, 'channel_events', { account_id: tenant.accountId, ref_id: body.visitId });
    // referral and direct are stored on the visit, but they are not /results channels.
    expect(events).toEqual(['referral', 'direct'].includes(channel) ? [] : [expect.objectContaining({ channel, type: 'visit' })]);
  });
});

describe('POST /measurement/visits: our own tracking', () => {
  it("answers a landing carrying this account's gvid with that visit (never counted twice); a tracked-link referrer", async ({ env }) => {
    const sourceId = newId('post');
    const url = 'https://www.acme.test/blog/launch';
    const codes = await trackedCodes(
      env.deps.db,
      BASE,
      { accountId: tenant.accountId, channel: 'seo', sourceType: 'post', sourceId, cardId: 'card_p', leadId: null },
      [url],
    );
    const code = codes.get(url)!;
    const click = await env.api().get(`/l/${code}`).set('User-Agent', BROWSER);
    const gvid = new URL(click.headers.location!).searchParams.get('gvid')!;
    const events = () => rows(env, 'channel_events', { account_id: tenant.accountId, type: 'visit', channel: 'seo' });
    const before = (await events()).length;
    for (const extra of [{}, { referrer: 'https://www.google.com/' }, { utm: { medium: 'email' } }]) {
      const byGvid = await post(env, { url: `${url}?utm_source=x&gvid=${gvid}`, ...extra });
      expect(byGvid.status).toBe(201);
      expect(byGvid.body).toEqual({ visitId: gvid, channel: 'seo' });
    }
    expect(await events()).toHaveLength(before);
    const byReferrer = await post(env, { url, referrer: `${BASE}/l/${code}` });
    expect(byReferrer.body.channel).toBe('seo');
    const visit = await row(env, 'visits', { id: byReferrer.body.visitId });
    expect(visit).toMatchObject({ via: 'reported', link_code: code, source_type: 'post', source_id: sourceId, card_id: 'card_p' });
    expect(await events()).toHaveLength(before + 1);
  });

  it("ignores another account's gvid and tracked link", async ({ env }) => {
    const other = await env.tenant();
    const url = 'https://www.acme.test/other';
    const codes = await trackedCodes(
      env.deps.db,
      BASE,
      { accountId: other.accountId, channel: 'email', sourceType: 'send', sourceId: newId('send'), cardId: null, leadId: null },
      [url],
    );
    const code = codes.get(url)!;
    const click = await env.api().get(`/l/${code}`).set('User-Agent', BROWSER);
    const gvid = new URL(click.headers.location!).searchParams.get('gvid')!;
    expect((await post(env, { url: `${url}?gvid=${gvid}` })).body.channel).toBe('direct');
    const res = await post(env, { url, referrer: `${BASE}/l/${code}` });
    // The referrer is this service, not another site: not a referral.
    expect(res.body.channel).toBe('direct');
    expect(await row(env, 'visits', { id: res.body.visitId })).toMatchObject({ link_code: null, lead_id: null });
  });
});

describe('POST /measurement/visits: what it refuses', () => {
  it.for([
    [{}, 'url is required'],
    [{ url: 'not a url' }, 'url must be an absolute http(s) URL'],
    [{ url: 'ftp://acme.test/x' }, 'url must be an absolute http(s) URL'],
    [{ url: '/pricing' }, 'url must be an absolute http(s) URL'],
    [{ url: `https://acme.test/${'a'.repeat(2_048)}` }, 'url must be at most 2048 characters'],
    [{ url: LANDING, referrer: 'x'.repeat(2_049) }, 'referrer must be at most 2048 characters'],
    [{ url: LANDING, referrer: 5 }, 'referrer must be a string'],
    [{ url: LANDING, utm: { source: 'x'.repeat(201) } }, 'utm.source must be at most 200 characters'],
    [{ url: LANDING, utm: { medium: 'email', gclid: 'x' } }, 'utm has unknown field gclid'],
    [{ url: LANDING, userAgent: 'x' }, 'body has unknown field userAgent'],
    [{ url: `${LANDING}?q=a\u0000b` }, 'url must not contain NUL characters or unpaired surrogates'],
    [{ url: LANDING, utm: { source: 'a\ud800' } }, 'utm.source must not contain NUL characters or unpaired surrogates'],
    [{ url: LANDING, referrer: 'https://x.test/\udc00' }, 'referrer must not contain NUL characters or unpaired surrogates'],
  ])('400 for %j: %s', async ([body, message], { env }) => {
    const res = await post(env, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: message });
  });

  it('answers a gvid that could not be one of ours (NUL, another shape) as a landing without it', async ({ env }) => {
    for (const gvid of ['%00', 'vis_%00x', `vis_${'a'.repeat(80)}`, "x'; drop table visits; --"]) {
      const res = await post(env, { url: `${LANDING}?gvid=${gvid}` });
      expect(res.status).toBe(201);
      expect(res.body.channel).toBe('direct');
    }
  });

  it('403 for a token without measurement:write, 401 without a token', async ({ env }) => {
    const reader = await env.tenant(['content:read', 'results:read']);
    const res = await post(env, { url: LANDING }, reader.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'measurement:write' });
    expect((await env.api().post('/api/v1/measurement/visits').send({ url: LANDING })).status).toBe(401);
  });

  it('records the write in the audit log against the token', async ({ env }) => {
    const t = await env.tenant(['measurement:write']);
    const res = await post(env, { url: LANDING }, t.token);
    const audit = await rows(env, 'audit_log', { account_id: t.accountId, actor: 'api' });
    expect(audit).toMatchObject([{ route: '/api/v1/measurement/visits', status: 201, target_id: res.body.visitId }]);
  });
});
