import { describe, expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { withVisitId } from '../../src/measurement/link-visits.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { row, rows } from '../helpers/rows.js';

// GET {BASE_URL}/l/{code}: a visit, a channel event, and a 302 to the destination.

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
it.override('options', { env: { BASE_URL: BASE } });

async function link(env: TestEnv, url: string, channel = 'email') {
  const { accountId } = await env.tenant();
  const sourceId = newId('send');
  const codes = await trackedCodes(
    env.deps.db,
    BASE,
    { accountId, channel, sourceType: 'send', sourceId, cardId: 'card_1', leadId: 'lead_1' },
    [url],
  );
  return { accountId, sourceId, code: codes.get(url)! };
}

const eventsOf = (env: TestEnv, accountId: string) => rows(env, 'channel_events', { account_id: accountId }).orderBy('id');

describe('GET /l/{code}', () => {
  it('records a visit and its channel event, then answers 302 with gvid, keeping the query and fragment', async ({ env }) => {
    const { accountId, sourceId, code } = await link(env, 'https://acme.test/pricing?plan=pro&ref=a%20b#faq');
    const res = await env.api().get(`/l/${code}`).set('User-Agent', BROWSER);
    expect(res.status).toBe(302);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const location = new URL(res.headers.location!);
    expect(location.origin + location.pathname).toBe('https://acme.test/pricing');
    expect(location.search).toMatch(/^\?plan=pro&ref=a%20b&gvid=vis_\w{20}$/);
    expect(location.hash).toBe('#faq');
    const visitId = location.searchParams.get('gvid')!;
    // Durable before the answer: the row is there as soon as the redirect is.
    const visit = await row(env, 'visits', { id: visitId });
    expect(visit).toMatchObject({
      account_id: accountId,
      channel: 'email',
      via: 'link',
      link_code: code,
      source_type: 'send',
      source_id: sourceId,
      card_id: 'card_1',
      lead_id: 'lead_1',
      bot: false,
    });
    expect(visit.ua_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(visit.ua_hash).not.toContain('Mozilla');
    expect(JSON.stringify(visit)).not.toContain('127.0.0.1');
    expect(await eventsOf(env, accountId)).toMatchObject([{ channel: 'email', type: 'visit', ref_id: visitId }]);
    expect(await rows(env, 'channel_connections', { account_id: accountId, channel: 'email' })).toHaveLength(1);
  });

  it('hashes the same User-Agent the same way and another differently', async ({ env }) => {
    const { code } = await link(env, 'https://acme.test/h');
    const ids: string[] = [];
    for (const ua of [BROWSER, BROWSER, `${BROWSER} Edg/131.0`]) {
      const res = await env.api().get(`/l/${code}`).set('User-Agent', ua);
      ids.push(new URL(res.headers.location!).searchParams.get('gvid')!);
    }
    // The same browser again is a repeat: the same visit (test/measurement/link-repeats.test.ts).
    expect(ids[1]).toBe(ids[0]);
    const hashes = await Promise.all(ids.map(async (id) => (await row(env, 'visits', { id })).ua_hash));
    expect(hashes[0]).toBe(hashes[1]);
    expect(hashes[2]).not.toBe(hashes[0]);
  });

  it.for([
    ['a crawler isbot knows', 'get', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
    ['a Proofpoint scanner dressed as Chrome', 'get', `${BROWSER} ppops-5f1c2a`],
    ['Barracuda', 'get', 'Mozilla/5.0 (compatible; Barracuda)'],
    ['an Office link preview', 'get', 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.12026; Pro)'],
    ['Safe Links', 'get', 'Mozilla/5.0 (compatible; Safe Links)'],
    ['an empty User-Agent', 'get', ''],
    ['a HEAD request from a browser', 'head', BROWSER],
  ] as const)('counts %s as a scanner click, redirects it without gvid, never as a visit', async ([_name, method, ua], { env }) => {
    const { accountId, code } = await link(env, 'https://acme.test/x?y=1');
    const res = await env.api()[method](`/l/${code}`).set('User-Agent', ua);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://acme.test/x?y=1');
    const visits = await rows(env, 'visits', { account_id: accountId });
    expect(visits).toHaveLength(1);
    expect(visits[0]).toMatchObject({ bot: true, channel: 'email' });
    const events = await eventsOf(env, accountId);
    expect(events.map((e: { type: string }) => e.type)).toEqual(['scanner_click']);
    expect(events[0].ref_id).toBe(visits[0].id);
  });

  it('answers an unknown or malformed code with a small HTML 404, and records nothing', async ({ env }) => {
    for (const path of ['/l/AAAAAAAAAAAA', '/l/short', '/l/%00', '/l/', '/l/AAAAAAAAAAAA/extra']) {
      const res = await env.api().get(path).set('User-Agent', BROWSER);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('Link not found');
      expect(res.text.length).toBeLessThan(1_000);
    }
    expect(await rows(env, 'visits', { link_code: 'AAAAAAAAAAAA' })).toHaveLength(0);
  });

  it('refuses other methods with 405 HTML', async ({ env }) => {
    const { code } = await link(env, 'https://acme.test/m');
    const res = await env.api().post(`/l/${code}`).send('x');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });

  it('takes many clicks at once from different browsers, each its own visit and event', async ({ env }) => {
    const { accountId, code } = await link(env, 'https://acme.test/many', 'seo');
    const res = await Promise.all(Array.from({ length: 40 }, (_, i) => env.api().get(`/l/${code}`).set('User-Agent', `${BROWSER} b/${i}`)));
    expect(res.every((r) => r.status === 302)).toBe(true);
    expect(new Set(res.map((r) => r.headers.location)).size).toBe(40);
    expect(await rows(env, 'visits', { account_id: accountId })).toHaveLength(40);
    const events = await eventsOf(env, accountId);
    expect(events).toHaveLength(40);
    expect(events.every((e: { channel: string; type: string }) => e.channel === 'seo' && e.type === 'visit')).toBe(true);
  });
});

describe('withVisitId', () => {
  it('appends gvid after the query as written and before the fragment', () => {
    expect(withVisitId('https://a.test/p', 'vis_1')).toBe('https://a.test/p?gvid=vis_1');
    expect(withVisitId('https://a.test/p?x=1&y#top', 'vis_1')).toBe('https://a.test/p?x=1&y&gvid=vis_1#top');
    expect(withVisitId('https://a.test/p?#top', 'vis_1')).toBe('https://a.test/p?gvid=vis_1#top');
  });
});
