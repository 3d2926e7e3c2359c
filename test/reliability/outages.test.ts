import request from 'supertest';
import { describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { createLogger } from '../../src/logger.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { privateRedis, tcpProxy } from '../helpers/outages.js';
import { waitFor } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';

let tenant: { accountId: string; token: string };
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
});

function runtimeWith(env: TestEnv, overrides: Record<string, string>): Deps {
  return createDeps(
    configWith({ DATABASE_URL: env.config.databaseUrl, QUEUE_PREFIX: env.config.queuePrefix, ...overrides }),
    createLogger('silent'),
  );
}

const write = (app: ReturnType<typeof createApp>, value: string) =>
  request(app)
    .post('/api/v1/blocklist')
    .set(auth(tenant.token))
    .send({ entries: [value] });
const read = (app: ReturnType<typeof createApp>) => request(app).get('/api/v1/blocklist').set(auth(tenant.token));

describe('outages', () => {
  it('Redis restarting under load: writes answer 503 while it is down, reads go on, and both recover without a restart', async ({
    env,
  }) => {
    const redis = await privateRedis();
    const deps = runtimeWith(env, { REDIS_URL: redis.url });
    await deps.ready();
    const app = createApp(deps);
    try {
      expect((await write(app, 'before.example')).status).toBe(200);
      await redis.stop();
      const during = await Promise.all(Array.from({ length: 10 }, (_, i) => write(app, `during-${i}.example`)));
      for (const res of during) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'temporarily unavailable' });
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      expect((await read(app)).status).toBe(200);
      await redis.start();
      await waitFor(async () => (await write(app, 'after.example')).status === 200, 'writes to recover', 20_000);
      const listed = (await read(app)).body.entries.map((e: { value: string }) => e.value);
      expect(listed).toEqual(expect.arrayContaining(['before.example', 'after.example']));
      expect(listed.filter((v: string) => v.startsWith('during-'))).toEqual([]);
    } finally {
      await deps.close();
      await redis.stop();
    }
  });

  it('Postgres cut off: 503 (never 500) for reads and writes, and recovery without a restart', async ({ env }) => {
    const pgPort = Number(new URL(env.config.databaseUrl).port || 5432);
    const proxy = await tcpProxy(pgPort);
    const url = new URL(env.config.databaseUrl);
    url.port = String(proxy.port);
    const deps = runtimeWith(env, { DATABASE_URL: url.toString() });
    await deps.ready();
    const app = createApp(deps);
    try {
      expect((await read(app)).status).toBe(200);
      proxy.cut();
      for (const res of [await read(app), await write(app, 'cut.example'), await request(app).get('/healthz')]) {
        expect(res.status).toBe(503);
        expect(res.body.error).toBe('temporarily unavailable');
      }
      proxy.restore();
      await waitFor(async () => (await read(app)).status === 200, 'reads to recover', 20_000);
      expect((await write(app, 'restored.example')).status).toBe(200);
      expect((await request(app).get('/healthz')).body).toEqual({ ok: true });
    } finally {
      await deps.close();
      await proxy.close();
    }
  });
});
