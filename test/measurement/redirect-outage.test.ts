import request from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/logger.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { it } from '../helpers/fixture.js';
import { redisAway, tcpProxy } from '../helpers/outages.js';
import { rows } from '../helpers/rows.js';

// A tracked link while Postgres is out of reach: a reader who clicked is still sent on (a lost visit
// beats a broken link), and the lost visit is logged; a link that cannot be read at all is a 503 page.

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let deps: Deps;
const lines: string[] = [];
it.override('options', { env: { BASE_URL: BASE } });
it.beforeAll(async ({ env }) => {
  proxy = await tcpProxy(Number(new URL(env.config.databaseUrl).port || 5432));
  const url = new URL(env.config.databaseUrl);
  url.port = String(proxy.port);
  const config = configWith({ DATABASE_URL: url.toString(), QUEUE_PREFIX: env.config.queuePrefix, BASE_URL: BASE });
  deps = createDeps(config, createLogger('warn', { write: (line: string) => lines.push(line) }));
  await deps.ready();
});
afterAll(async () => {
  await deps.close();
  await proxy.close();
});

describe('GET /l/{code} with Postgres down', () => {
  it('redirects a known (cached) link without gvid and logs the lost visit without its destination', async ({ env }) => {
    const { accountId } = await env.tenant();
    const dest = 'https://acme.test/secret-path?email=jane%40acme.test';
    const codes = await trackedCodes(
      env.deps.db,
      BASE,
      { accountId, channel: 'email', sourceType: 'send', sourceId: newId('send'), cardId: null, leadId: null },
      [dest],
    );
    const code = codes.get(dest)!;
    const app = createApp(deps);
    const first = await request(app).get(`/l/${code}`).set('User-Agent', BROWSER);
    expect(first.status).toBe(302);
    expect(first.headers.location).toContain('gvid=');

    proxy.cut();
    try {
      // Another browser: the first one's repeat would be answered from Redis without a write.
      const down = await request(app).get(`/l/${code}`).set('User-Agent', `${BROWSER} Edg/131.0`);
      expect(down.status).toBe(302);
      expect(down.headers.location).toBe(dest);
      const logged = lines.filter((l) => l.includes('tracked link visit not recorded'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain(code);
      expect(logged[0]).not.toContain('secret-path');

      const unknown = await request(app).get('/l/ZZZZZZZZZZZZ').set('User-Agent', BROWSER);
      expect(unknown.status).toBe(503);
      expect(unknown.headers['content-type']).toMatch(/^text\/html/);
      expect(unknown.headers['retry-after']).toBe('5');
    } finally {
      proxy.restore();
    }
    expect(await rows(env, 'visits', { account_id: accountId })).toHaveLength(1);
    // The browser whose visit was lost is counted on its next click, not answered with a gvid naming nothing.
    const after = await request(app).get(`/l/${code}`).set('User-Agent', `${BROWSER} Edg/131.0`);
    const gvid = new URL(after.headers.location!).searchParams.get('gvid');
    expect(await rows(env, 'visits', { account_id: accountId, id: gvid })).toHaveLength(1);
  });
});

describe('GET /l/{code} with Redis down', () => {
  it('counts the click (a repeat counted twice beats a click lost) and logs that the repeat check was unreachable', async ({ env }) => {
    const { accountId } = await env.tenant();
    const dest = 'https://acme.test/no-redis';
    const codes = await trackedCodes(
      env.deps.db,
      BASE,
      { accountId, channel: 'seo', sourceType: 'post', sourceId: newId('post'), cardId: null, leadId: null },
      [dest],
    );
    const config = configWith({
      ...redisAway(),
      DATABASE_URL: env.config.databaseUrl,
      QUEUE_PREFIX: env.config.queuePrefix,
      BASE_URL: BASE,
    });
    const away = createDeps(config, createLogger('warn', { write: (line: string) => lines.push(line) }));
    try {
      const res = await request(createApp(away))
        .get(`/l/${codes.get(dest)}`)
        .set('User-Agent', BROWSER);
      expect(res.status).toBe(302);
      const gvid = new URL(res.headers.location!).searchParams.get('gvid');
      expect(await rows(env, 'visits', { account_id: accountId }).pluck('id')).toEqual([gvid]);
      expect(lines.filter((l) => l.includes('repeat check unreachable')).length).toBeGreaterThan(0);
    } finally {
      await away.close();
    }
  });
});
