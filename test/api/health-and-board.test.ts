import { describe, expect } from 'vitest';
import request from 'supertest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { OPEN_QUEUES } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/logger.js';
import { createDeps } from '../../src/deps.js';
import { it } from '../helpers/fixture.js';
import { redisAway } from '../helpers/outages.js';

it.override('options', { env: { ADMIN_USER: 'ops', ADMIN_PASSWORD: 'correct horse' } });

describe('GET /healthz', () => {
  it('answers 200 {"ok":true} without auth when Postgres and Redis answer', async ({ env }) => {
    const res = await env.api().get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
  });

  it('answers 503 naming redis when Redis is unreachable, and postgres when Postgres is', async ({ env }) => {
    for (const [override, failed] of [
      [redisAway(), ['redis']],
      [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' }, ['postgres']],
    ] as const) {
      const deps = createDeps(configWith({ DATABASE_URL: env.config.databaseUrl, ...override }), createLogger('silent'));
      try {
        const res = await request(createApp(deps)).get('/healthz');
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ error: 'temporarily unavailable', ok: false, failed });
        expect(res.headers['retry-after']).toBeDefined();
      } finally {
        await deps.close();
      }
    }
  });
});

describe('Bull Board at /admin/queues', () => {
  const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

  it('refuses without basic auth or with a wrong password', async ({ env }) => {
    const none = await env.api().get('/admin/queues');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic /);
    expect((await env.api().get('/admin/queues').set('Authorization', basic('ops', 'wrong'))).status).toBe(401);
  });

  it('shows every queue to the operator', async ({ env }) => {
    const page = await env.api().get('/admin/queues').set('Authorization', basic('ops', 'correct horse'));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<html');
    const api = await env.api().get('/admin/queues/api/queues').set('Authorization', basic('ops', 'correct horse'));
    expect(api.status).toBe(200);
    const names = (api.body.queues as Array<{ name: string }>).map((q) => q.name).sort();
    expect(names).toEqual([...OPEN_QUEUES].sort());
  });

  it('is not mounted when ADMIN_USER and ADMIN_PASSWORD are unset', async ({ env }) => {
    const deps = createDeps(
      configWith({ DATABASE_URL: env.config.databaseUrl, QUEUE_PREFIX: env.config.queuePrefix }),
      createLogger('silent'),
    );
    try {
      const res = await request(createApp(deps)).get('/admin/queues');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
    } finally {
      await deps.close();
    }
  });
});
