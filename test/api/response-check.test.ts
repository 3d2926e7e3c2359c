import { Writable } from 'node:stream';
import request from 'supertest';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { createApp } from '../../api/app.js';
import { defineRoute, type RouteDef } from '../../api/route-def.js';
import { routes } from '../../api/routes/index.js';
import { createLogger } from '../../src/logger.js';
import { it } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

/**
 * CHECK_RESPONSES (on in every test): the router parses each success reply with its route's response
 * schema, so a reply that drifted from /openapi.json fails the test that made it. These routes drift on
 * purpose, the ways the compiler cannot see: text rendered by the store, and a status nobody declared.
 */
const Thing = z.object({ ok: z.literal(true), count: z.number().int() });

const rendered = { good: '{"ok":true,"count":2}', bad: '{"ok":true,"count":"two"}', extra: '{"ok":true,"count":2,"secretNote":"x"}' };

const drifting: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/_test/rendered/{mode}',
    operationId: 'testRendered',
    summary: 'test: a reply rendered as JSON text',
    scope: null,
    bucket: 'reads',
    params: z.object({ mode: z.enum(['good', 'bad', 'extra']) }),
    responses: { 200: { description: 'a thing', schema: Thing } },
  }).handle(async ({ params }) => ({ json: rendered[params.mode] })),
  defineRoute({
    method: 'post',
    path: '/api/v1/_test/undeclared',
    operationId: 'testUndeclared',
    summary: 'test: a success status the route does not declare',
    scope: null,
    bucket: 'writes',
    responses: { 200: { description: 'a thing', schema: Thing } },
    // Through the erased table type, as a handler outside defineRoute's checks could do.
  }).handle((async () => ({ status: 201, body: { ok: true, count: 1 } })) as unknown as () => Promise<{ body: z.input<typeof Thing> }>),
  defineRoute({
    method: 'get',
    path: '/api/v1/_test/text/{mode}',
    operationId: 'testText',
    summary: 'test: a text reply of a declared media type, or 304 without a body',
    scope: null,
    bucket: 'reads',
    params: z.object({ mode: z.enum(['good', 'bad', 'same']) }),
    responses: {
      200: { description: 'csv', schema: z.string().startsWith('hello', 'must start with hello'), contentType: 'text/csv' },
      304: { description: 'not modified' },
    },
  }).handle(async ({ params }) => (params.mode === 'same' ? { status: 304 } : { text: params.mode === 'good' ? 'hello,1' : 'bye' })),
];

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let token: string;
it.override('options', { extraRoutes: drifting, logger: createLogger('error', sink) });
it.beforeAll(async ({ env }) => {
  ({ token } = await env.tenant());
});

describe('the response check (CHECK_RESPONSES)', () => {
  it('is on in the test environment', ({ env }) => {
    expect(env.config.checkResponses).toBe(true);
  });

  it('passes a reply that matches its schema, rendered text included', async ({ env }) => {
    const res = await env.api().get('/api/v1/_test/rendered/good').set(auth(token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, count: 2 });
  });

  it('answers 500 and logs the route and the zod issue when rendered text drifts from the schema', async ({ env }) => {
    const res = await env.api().get('/api/v1/_test/rendered/bad').set(auth(token));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server misconfigured' });
    const logged = lines.map((l) => JSON.parse(l));
    const entry = logged.find((l) => l.msg === 'reply does not match its response schema' && l.operationId === 'testRendered');
    expect(entry).toMatchObject({ route: '/api/v1/_test/rendered/{mode}', method: 'get', status: 200 });
    expect(entry.problem).toMatch(/^count: .*number/);
  });

  it('answers 500 when the reply carries a field the schema does not document', async ({ env }) => {
    const res = await env.api().get('/api/v1/_test/rendered/extra').set(auth(token));
    expect(res.status).toBe(500);
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.operationId === 'testRendered' && /secretNote/.test(l.problem));
    expect(entry.problem).toBe('secretNote: the reply carries a field the schema does not document');
  });

  it('answers 500 for a success status the route does not declare', async ({ env }) => {
    const res = await env.api().post('/api/v1/_test/undeclared').set(auth(token));
    expect(res.status).toBe(500);
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.operationId === 'testUndeclared');
    expect(entry.problem).toBe('status 201 is not among the declared responses (200)');
  });

  it('sends declared text with its media type, checks it against its schema, and sends 304 with no body', async ({ env }) => {
    const good = await env.api().get('/api/v1/_test/text/good').set(auth(token));
    expect(good.status).toBe(200);
    expect(good.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(good.text).toBe('hello,1');
    const bad = await env.api().get('/api/v1/_test/text/bad').set(auth(token));
    expect(bad.status).toBe(500);
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.operationId === 'testText');
    expect(entry.problem).toBe('text: must start with hello');
    const same = await env.api().get('/api/v1/_test/text/same').set(auth(token));
    expect(same.status).toBe(304);
    expect(same.text ?? '').toBe('');
  });

  it('is off unless configured: the same drifting reply then goes out as it is', async ({ env }) => {
    const app = createApp({ ...env.deps, config: { ...env.config, checkResponses: false } }, [...routes, ...drifting]);
    const res = await request(app).get('/api/v1/_test/rendered/bad').set(auth(token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, count: 'two' });
  });
});
