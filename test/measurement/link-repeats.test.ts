import { afterAll, describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { newId } from '../../src/ids.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { call, closeAgents, flood, serve } from './door-http.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

// A tracked link is public (it sits in every published post's HTML): a stranger's flood of GETs must not
// grow storage or inflate /results. The same browser (address and User-Agent) following one link within
// the repeat window counts once and gets the same gvid; another browser counts apart.

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
let port: number;
let close: () => Promise<void>;
it.override('options', { env: { BASE_URL: BASE } });
it.beforeAll(async ({ env }) => {
  ({ port, close } = await serve(env.app));
});
afterAll(async () => {
  closeAgents();
  await close?.();
});

async function postLink(env: TestEnv, accountId: string, url: string) {
  const codes = await trackedCodes(
    env.deps.db,
    BASE,
    { accountId, channel: 'seo', sourceType: 'post', sourceId: newId('post'), cardId: null, leadId: null },
    [url],
  );
  return codes.get(url)!;
}

const visits = (env: TestEnv, accountId: string) => rows(env, 'visits', { account_id: accountId }).orderBy('at');
const events = (env: TestEnv, accountId: string) => rows(env, 'channel_events', { account_id: accountId }).select('type', 'ref_id');

describe('GET /l/{code} under a flood', () => {
  it('counts 1,000 GETs of one public link from one browser once: one visit, one event, one gvid, /results seo visits 1', async ({
    env,
  }) => {
    const { accountId, token } = await env.tenant();
    const code = await postLink(env, accountId, 'https://acme.test/blog/launch?x=1');
    const answers = await flood(1_000, 50, () => call(port, '127.0.0.1', `/l/${code}`, { userAgent: BROWSER }));
    expect(answers.every((a) => a.status === 302)).toBe(true);
    const locations = new Set(answers.map((a) => a.headers.location));
    expect(locations.size).toBe(1);
    const gvid = new URL([...locations][0]!).searchParams.get('gvid');
    expect(gvid).toMatch(/^vis_\w+$/);

    const rows = await visits(env, accountId);
    expect(rows.map((r) => r.id)).toEqual([gvid]);
    expect(await events(env, accountId)).toEqual([{ type: 'visit', ref_id: gvid }]);
    const res = await env.api().get('/api/v1/results').set(auth(token));
    expect(res.status).toBe(200);
    const seo = ResultsResponse.parse(res.body).results.seo;
    expect(seo).toMatchObject({ data: { window: { visits: 1, scannerClicks: 0 } } });
  });

  it('counts two different clients twice (another address, another browser), each keeping its own gvid on repeats', async ({ env }) => {
    const { accountId } = await env.tenant();
    const code = await postLink(env, accountId, 'https://acme.test/blog/two');
    const clients = [
      { from: '127.0.0.1', ua: BROWSER },
      { from: '127.0.1.1', ua: BROWSER },
      { from: '127.0.0.1', ua: `${BROWSER} Edg/131.0` },
    ];
    const firsts = await Promise.all(clients.map((c) => call(port, c.from, `/l/${code}`, { userAgent: c.ua })));
    const again = await flood(30, 10, (i) => call(port, clients[i % 3]!.from, `/l/${code}`, { userAgent: clients[i % 3]!.ua }));
    expect(again.map((a) => a.headers.location)).toEqual(again.map((_, i) => firsts[i % 3]!.headers.location));
    const gvids = firsts.map((a) => new URL(a.headers.location!).searchParams.get('gvid'));
    expect(new Set(gvids).size).toBe(3);
    expect((await visits(env, accountId)).map((r) => r.id).sort()).toEqual([...gvids].sort());
    expect((await events(env, accountId)).filter((e) => e.type === 'visit')).toHaveLength(3);
    // No address is kept: not in the visit rows, not in the Redis keys that remember the browsers.
    expect(JSON.stringify(await visits(env, accountId))).not.toMatch(/127\.0\.[01]\.1/);
    const keys = await env.deps.redis.keys(`*${accountId}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toMatch(/127\.0\./);
  });

  it('counts a bot as a scanner click once per window, never as a visit, and a person from the same address apart', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    const code = await postLink(env, accountId, 'https://acme.test/blog/bots');
    const bots = await flood(100, 20, () => call(port, '127.0.0.1', `/l/${code}`, { userAgent: GOOGLEBOT }));
    expect(bots.every((a) => a.status === 302 && a.headers.location === 'https://acme.test/blog/bots')).toBe(true);
    const heads = await flood(20, 5, () => call(port, '127.0.0.1', `/l/${code}`, { userAgent: BROWSER, method: 'HEAD' }));
    expect(heads.every((a) => a.status === 302 && a.headers.location === 'https://acme.test/blog/bots')).toBe(true);
    // The browser whose HEAD was a scanner's is still a person on GET: its click counts.
    const person = await call(port, '127.0.0.1', `/l/${code}`, { userAgent: BROWSER });
    expect(person.headers.location).toMatch(/gvid=vis_/);
    expect((await visits(env, accountId)).map((r) => r.bot).sort()).toEqual([false, true, true]);
    expect((await events(env, accountId)).map((e) => e.type).sort()).toEqual(['scanner_click', 'scanner_click', 'visit']);
    const seo = ResultsResponse.parse((await env.api().get('/api/v1/results').set(auth(token))).body).results.seo;
    expect(seo).toMatchObject({ data: { window: { visits: 1, scannerClicks: 2 } } });
  });
});
