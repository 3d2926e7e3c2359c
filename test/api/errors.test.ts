import { describe, expect } from 'vitest';
import request from 'supertest';
import { createApp } from '../../api/app.js';
import { routes } from '../../api/routes/index.js';
import { listAudit } from '../../src/audit/audit.service.js';
import { configWith } from '../helpers/config.js';
import { createLogger } from '../../src/logger.js';
import { createDeps } from '../../src/deps.js';
import { fixtureRoutes } from '../helpers/fixture-routes.js';
import { it } from '../helpers/fixture.js';
import { auth, bearer } from '../helpers/auth.js';

let tenant: { accountId: string; token: string; tokenId: string };
it.override('options', { extraRoutes: fixtureRoutes });
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
});

function expectErrorShape(res: request.Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error).toBe(error);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
  expect(res.headers['x-powered-by']).toBeUndefined();
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts|stack|hunter2|\/srv\//);
}

describe('error shape', () => {
  it('answers an unknown path with 404 {"error":"not found"}', async ({ env }) => {
    expectErrorShape(await request(env.app).get('/api/v1/nope'), 404, 'not found');
    expectErrorShape(await request(env.app).get('/nothing-here'), 404, 'not found');
    expectErrorShape(await request(env.app).delete('/api/v1/me').set('Authorization', bearer(tenant.token)), 404, 'not found');
  });

  it('answers a body that is not JSON with 400 and a sentence', async ({ env }) => {
    const res = await request(env.app)
      .post('/api/v1/_test/write')
      .set('Authorization', bearer(tenant.token))
      .set('Content-Type', 'application/json')
      .send('{"note": ');
    expectErrorShape(res, 400, 'body must be valid JSON');
  });

  it('answers 413 for a JSON body over 1 MB, and 401 without reading it when the caller is unknown', async ({ env }) => {
    const big = JSON.stringify({ note: 'x'.repeat(1024 * 1024) });
    const tooLarge = await request(env.app)
      .post('/api/v1/_test/write')
      .set('Authorization', bearer(tenant.token))
      .set('Content-Type', 'application/json')
      .send(big);
    expectErrorShape(tooLarge, 413, 'body is too large');
    const stranger = await request(env.app).post('/api/v1/_test/write').set('Content-Type', 'application/json').send(big);
    expectErrorShape(stranger, 401, 'unauthorized');
  });

  it('names the field and the rule in every 400', async ({ env }) => {
    const post = (body: unknown) =>
      request(env.app)
        .post('/api/v1/_test/write')
        .set('Authorization', bearer(tenant.token))
        .send(body as object);
    expectErrorShape(await post({}), 400, 'note is required');
    expectErrorShape(await post({ note: 5 }), 400, 'note must be a string');
    expectErrorShape(await post({ note: 'x'.repeat(11) }), 400, 'note must be at most 10 characters');
    expectErrorShape(await post({ note: 'x', extra: 1 }), 400, 'body has unknown field extra');
    expectErrorShape(await post([1, 2]), 400, 'body must be an object');
    const noBody = await request(env.app).post('/api/v1/_test/write').set('Authorization', bearer(tenant.token));
    expectErrorShape(noBody, 400, 'body is required and must be JSON');
  });

  it('answers 403 forbidden with requiredScope for a token without the route scope', async ({ env }) => {
    const { token } = await env.tenant(['review:read']);
    const res = await request(env.app).post('/api/v1/_test/write').set(auth(token)).send({ note: 'x' });
    expectErrorShape(res, 403, 'forbidden');
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'review:write' });
  });

  it('answers 500 server misconfigured without any internals for an unexpected fault', async ({ env }) => {
    const res = await request(env.app).get('/api/v1/_test/crash').set('Authorization', bearer(tenant.token));
    expectErrorShape(res, 500, 'server misconfigured');
    expect(res.body).toEqual({ error: 'server misconfigured' });
  });

  it('answers 503 temporarily unavailable with Retry-After when Postgres cannot be reached', async ({ env }) => {
    const deps = createDeps(
      configWith({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', QUEUE_PREFIX: env.config.queuePrefix }),
      createLogger('silent'),
    );
    try {
      const res = await request(createApp(deps, routes)).get('/api/v1/me').set('Authorization', bearer(tenant.token));
      expectErrorShape(res, 503, 'temporarily unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await deps.close();
    }
  });

  it('sends no CORS headers, not even to a preflight', async ({ env }) => {
    const res = await request(env.app)
      .options('/api/v1/me')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('records an API write in the audit log with token, route, target and status, and nothing for a failed one', async ({ env }) => {
    const ok = await request(env.app).post('/api/v1/_test/write').set('Authorization', bearer(tenant.token)).send({ note: 'target-1' });
    expect(ok.status).toBe(200);
    const failed = await request(env.app).post('/api/v1/_test/write').set('Authorization', bearer(tenant.token)).send({ note: 'fail' });
    expect(failed.status).toBe(500);
    const entries = (await listAudit(env.deps.db, tenant.accountId, 50)).filter((e) => e.actor === 'api');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: 'api',
      tokenId: tenant.tokenId,
      tokenLabel: 'test',
      method: 'POST',
      route: '/api/v1/_test/write',
      targetId: 'target-1',
      status: 200,
    });
  });
});
