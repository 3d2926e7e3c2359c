import request from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/logger.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { tcpProxy } from '../helpers/outages.js';

// A tracked link while Postgres is out of reach: a reader who clicked is still sent on (a lost visit
// beats a broken link), and the lost visit is logged; a link that cannot be read at all is a 503 page.

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
let env: TestEnv;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let rt: Deps;
const lines: string[] = [];
it.override('options', { env: { BASE_URL: BASE } });
it.beforeAll(async ({ env: e }) => {
  env = e;
  proxy = await tcpProxy(Number(new URL(env.config.databaseUrl).port || 5432));
  const url = new URL(env.config.databaseUrl);
  url.port = String(proxy.port);
  const config = configWith({ DATABASE_URL: url.toString(), QUEUE_PREFIX: env.config.queuePrefix, BASE_URL: BASE });
  rt = createDeps(config, createLogger('warn', { write: (line: string) => lines.push(line) }));
  await rt.ready();
});
afterAll(async () => {
  await rt.close();
  await proxy.close();
});

describe('GET /l/{code} with Postgres down', () => {
  it('redirects a known (cached) link without gvid and logs the lost visit without its destination', async () => {
    const { accountId } = await env.tenant();
    const dest = 'https://acme.test/secret-path?email=jane%40acme.test';
    const codes = await trackedCodes(
      env.rt.db,
      BASE,
      { accountId, channel: 'email', sourceType: 'send', sourceId: newId('send'), cardId: null, leadId: null },
      [dest],
    );
    const code = codes.get(dest)!;
    const app = createApp(rt);
    const first = await request(app).get(`/l/${code}`).set('User-Agent', BROWSER);
    expect(first.status).toBe(302);
    expect(first.headers.location).toContain('gvid=');

    proxy.cut();
    try {
      const down = await request(app).get(`/l/${code}`).set('User-Agent', BROWSER);
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
    expect(await env.rt.db('visits').where({ account_id: accountId })).toHaveLength(1);
  });
});
