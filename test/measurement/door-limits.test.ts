import { afterAll, describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { newId } from '../../src/ids.js';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { createLogger } from '../../src/logger.js';
import { clientOf } from '../../src/measurement/clients.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { maintenancePool } from '../../workers/maintenance.js';
import { buildLead, buildThread } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { call, closeAgents, flood, serve } from './door-http.js';
import { rows, countRows } from '../helpers/rows.js';

// The public doors' limits: visits counted per client network and per link in an hour (past them the
// redirect still answers, uncounted), requests to /u/ per client network in a minute, and the short
// life of bot visit rows.

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const DAY = 24 * 60 * 60 * 1000;
const log = createLogger('silent');
let port: number;
let close: () => Promise<void>;
it.override('options', {
  env: {
    BASE_URL: BASE,
    LINK_CLIENT_VISITS_PER_HOUR: '3',
    LINK_CODE_VISITS_PER_HOUR: '5',
    UNSUBSCRIBE_CLIENT_PER_MINUTE: '5',
    LINK_BOT_VISIT_RETENTION_DAYS: '2',
  },
});
it.beforeAll(async ({ env }) => {
  ({ port, close } = await serve(env.app));
});
afterAll(async () => {
  closeAgents();
  await close?.();
});

async function links(env: TestEnv, accountId: string, urls: string[]) {
  const codes = await trackedCodes(
    env.deps.db,
    BASE,
    { accountId, channel: 'seo', sourceType: 'post', sourceId: newId('post'), cardId: null, leadId: null },
    urls,
  );
  return urls.map((u) => codes.get(u)!);
}

const nVisits = (env: TestEnv, accountId: string) => countRows(env, 'visits', { account_id: accountId });
const nEvents = (env: TestEnv, accountId: string) => countRows(env, 'channel_events', { account_id: accountId });

describe('visits counted per client network', () => {
  it('counts at most LINK_CLIENT_VISITS_PER_HOUR browsers of one network; past it every click still redirects, uncounted', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    const [a, b] = await links(env, accountId, ['https://acme.test/a', 'https://acme.test/b']);
    // Six browsers of one /24 (two addresses, three User-Agents each), over two links of the account.
    const clicks = await flood(6, 1, (i) =>
      call(port, i % 2 ? '127.0.0.2' : '127.0.0.1', `/l/${i < 3 ? a : b}`, { userAgent: `${BROWSER} n/${i}` }),
    );
    expect(clicks.every((c) => c.status === 302)).toBe(true);
    expect(clicks.filter((c) => c.headers.location!.includes('gvid='))).toHaveLength(3);
    expect(clicks.slice(3).map((c) => c.headers.location)).toEqual(['https://acme.test/b', 'https://acme.test/b', 'https://acme.test/b']);
    expect(await nVisits(env, accountId)).toBe(3);
    expect(await nEvents(env, accountId)).toBe(3);
    // Another network is another client.
    const other = await call(port, '127.0.5.1', `/l/${b}`, { userAgent: BROWSER });
    expect(other.headers.location).toMatch(/gvid=vis_/);
    expect(await nVisits(env, accountId)).toBe(4);
    // The limit is the account's: the same network still counts on another account's link.
    const { accountId: second } = await env.tenant();
    const [c] = await links(env, second, ['https://beta.test/c']);
    expect((await call(port, '127.0.0.1', `/l/${c}`, { userAgent: `${BROWSER} n/9` })).headers.location).toMatch(/gvid=vis_/);
    expect(await nVisits(env, second)).toBe(1);
  });
});

describe('visits counted per link', () => {
  it('counts at most LINK_CODE_VISITS_PER_HOUR visits of one link from all networks together; another link still counts', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    const [hot, cold] = await links(env, accountId, ['https://acme.test/hot', 'https://acme.test/cold']);
    const clicks = await flood(8, 1, (i) => call(port, `127.0.${10 + i}.1`, `/l/${hot}`, { userAgent: BROWSER }));
    expect(clicks.every((c) => c.status === 302)).toBe(true);
    expect(clicks.filter((c) => c.headers.location!.includes('gvid='))).toHaveLength(5);
    expect(await nVisits(env, accountId)).toBe(5);
    expect((await call(port, '127.0.30.1', `/l/${cold}`, { userAgent: BROWSER })).headers.location).toMatch(/gvid=vis_/);
    expect(await nVisits(env, accountId)).toBe(6);
  });
});

describe('/u/{token} per client network', () => {
  it('answers 429 with Retry-After past UNSUBSCRIBE_CLIENT_PER_MINUTE, changing nothing; another network is served', async ({ env }) => {
    const { accountId } = await env.tenant();
    const lead = await buildLead(env.deps.db, accountId, {
      domain: 'acme.test',
      status: 'contacted',
      contacts: [{ email: 'jane@acme.test' }],
    });
    const thread = await buildThread(env.deps.db, accountId, { leadId: lead.id, to: 'jane@acme.test' });
    const path = `/u/${thread.replyToken}`;
    const gets = await flood(5, 1, (i) => call(port, '127.0.40.1', i % 2 ? '/u/notatoken' : path));
    expect(gets.map((g) => g.status)).toEqual([200, 404, 200, 404, 200]);
    const post = { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    const over = await call(port, '127.0.40.9', path, post);
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(over.text)).toEqual({ error: 'rate limited' });
    expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
    const elsewhere = await call(port, '127.0.41.1', path, post);
    expect(elsewhere.status).toBe(200);
    expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(true);
  });
});

describe('client networks', () => {
  it('reads IPv4 by its /24 and IPv6 by its /48, a host by its address or /64', () => {
    expect(clientOf('203.0.113.7')).toEqual({ address: '203.0.113.7', network: '203.0.113.0/24' });
    expect(clientOf('::ffff:203.0.113.7')).toEqual({ address: '203.0.113.7', network: '203.0.113.0/24' });
    expect(clientOf('2001:db8:aa:bb:1:2:3:4')).toEqual({ address: '2001:db8:aa:bb::/64', network: '2001:db8:aa::/48' });
    expect(clientOf('2001:db8::1')).toEqual({ address: '2001:db8:0:0::/64', network: '2001:db8:0::/48' });
    expect(clientOf('fe80::1%eth0')).toEqual({ address: 'fe80:0:0:0::/64', network: 'fe80:0:0::/48' });
    expect(clientOf(undefined)).toEqual({ address: 'unknown', network: 'unknown' });
    expect(clientOf('not an address')).toEqual({ address: 'unknown', network: 'unknown' });
  });
});

describe('bot visit retention (LINK_BOT_VISIT_RETENTION_DAYS)', () => {
  async function visitRows(env: TestEnv, accountId: string, rows: { id: string; bot: boolean; at: number }[]) {
    await env.deps.db('visits').insert(rows.map((r) => ({ ...r, account_id: accountId, channel: 'seo', via: 'link' })));
  }
  const ids = async (env: TestEnv, accountId: string) => rows(env, 'visits', { account_id: accountId }).orderBy('id').pluck('id');

  it('deletes bot visits older than the retention, oldest first in bounded chunks, and keeps counted visits and counts', async ({
    env,
  }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    await visitRows(env, accountId, [
      ...Array.from({ length: 7 }, (_, i) => ({ id: `vis_oldbot${i}`, bot: true, at: now - 3 * DAY + i })),
      { id: 'vis_newbot', bot: true, at: now - 1 * DAY },
      { id: 'vis_oldperson', bot: false, at: now - 30 * DAY },
    ]);
    await env.deps
      .db('channel_events')
      .insert({ account_id: accountId, channel: 'seo', type: 'scanner_click', at: now - 3 * DAY, ref_id: 'vis_oldbot0', recorded_at: now });
    const pass = await runRetentionPass(env.deps, log, { now, only: ['botVisits'], batchRows: 3, passBatches: 2 });
    expect(pass.removed).toEqual({ botVisits: 6 });
    expect(await ids(env, accountId)).toEqual(['vis_newbot', 'vis_oldbot6', 'vis_oldperson']);
    const result = (await maintenancePool.handlers.retentionSweep({}, { deps: env.deps, log, job: {} as never })) as {
      removed: { botVisits: number };
    };
    expect(result.removed.botVisits).toBeGreaterThanOrEqual(1);
    expect(await ids(env, accountId)).toEqual(['vis_newbot', 'vis_oldperson']);
    expect(await rows(env, 'channel_events', { account_id: accountId, type: 'scanner_click' })).toHaveLength(1);
  });

  it('reads the settings, with their defaults, and refuses what is not a whole number in range', () => {
    const links = loadConfig({}).links;
    expect(links).toEqual({
      repeatWindowMs: 30 * 60 * 1000,
      clientVisitsPerHour: 100,
      codeVisitsPerHour: 2_000,
      botVisitRetentionMs: 7 * DAY,
      unsubscribeClientPerMinute: 300,
    });
    expect(loadConfig({ LINK_REPEAT_WINDOW_SECONDS: '0' }).links.repeatWindowMs).toBe(0);
    for (const name of [
      'LINK_CLIENT_VISITS_PER_HOUR',
      'LINK_CODE_VISITS_PER_HOUR',
      'LINK_BOT_VISIT_RETENTION_DAYS',
      'UNSUBSCRIBE_CLIENT_PER_MINUTE',
    ]) {
      expect(() => loadConfig({ [name]: '0' }), name).toThrow(ConfigError);
    }
  });
});
