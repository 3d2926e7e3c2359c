import { brotliCompressSync, gzipSync } from 'node:zlib';
import type request from 'supertest';
import { describe, expect } from 'vitest';
import { buildCard, buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { cardRow, countRows } from '../helpers/rows.js';

// What a client can get wrong at the edge, on every kind of route: text Postgres cannot store (NUL,
// unpaired surrogates), bodies its Content-Encoding cannot undo, paths that cannot be percent-decoded,
// JSON nested deeper than the edge takes, and the auth scheme's case. Never a 500.

let tenant: { accountId: string; token: string };
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
});

const TEXT_RULE = 'must not contain NUL characters or unpaired surrogates';
const DEPTH_RULE = 'body must not nest arrays and objects more than 64 levels deep';

const authed = (r: request.Test) => r.set(auth(tenant.token));
const post = (env: TestEnv, path: string, body: unknown) => authed(env.api().post(path)).send(body as object);

function expectError(res: request.Response, status: number, error: string) {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: { error } });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
}

const auditCount = (env: TestEnv) => countRows(env, 'audit_log', { account_id: tenant.accountId });

const workflow = (over: Record<string, unknown>) => ({
  name: 'Weekly',
  scheduleText: 'every monday at 9',
  steps: [{ title: 'Look' }],
  ...over,
});

/** A JSON array nested `depth` deep around `inner`, as text. */
const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

describe('text Postgres cannot store is a 400 naming the field, on every body and query', () => {
  for (const [name, bad] of [
    ['a NUL', 'a\u0000b'],
    ['an unpaired surrogate', 'a\ud800b'],
  ] as const) {
    it(`answers ${name} with 400 and writes nothing`, async ({ env }) => {
      const question = await buildCard(env.deps.db, tenant.accountId, 'question');
      const approval = await buildCard(env.deps.db, tenant.accountId, 'approval');
      const reply = await buildCard(env.deps.db, tenant.accountId, 'mail_reply', {
        payload: { to: 'a@example.com', draft: { body: 'Hi' } },
      });
      const lead = await buildLead(env.deps.db, tenant.accountId);
      const before = await auditCount(env);
      const cases: [string, () => request.Test, string][] = [
        ['agent message', () => post(env, '/api/v1/agent/messages', { text: bad }), 'text'],
        ['answer', () => post(env, `/api/v1/review/${question.id}/answer`, { action: 'answer', text: bad }), 'text'],
        ['send', () => post(env, `/api/v1/review/${reply.id}/send`, { body: bad }), 'body'],
        ['request changes', () => post(env, `/api/v1/review/${approval.id}/request-changes`, { text: bad }), 'text'],
        ['dismiss', () => post(env, `/api/v1/review/${approval.id}/dismiss`, { reason: bad }), 'reason'],
        ['lead label', () => authed(env.api().patch(`/api/v1/leads/${lead.id}`)).send({ vertical: bad }), 'vertical'],
        ['lead tag', () => authed(env.api().patch(`/api/v1/leads/${lead.id}`)).send({ tags: ['ok', bad] }), 'tags.1'],
        ['block reason', () => post(env, '/api/v1/blocklist', { entries: [{ value: 'x@example.com', reason: bad }] }), 'entries.0.reason'],
        ['block value', () => post(env, '/api/v1/blocklist', { entries: [bad] }), 'entries.0'],
        ['workflow name', () => post(env, '/api/v1/workflows', workflow({ name: bad })), 'name'],
        ['workflow description', () => post(env, '/api/v1/workflows', workflow({ description: bad })), 'description'],
        ['workflow step', () => post(env, '/api/v1/workflows', workflow({ steps: [{ title: 'ok' }, { title: bad }] })), 'steps.1.title'],
        [
          'workflow step details',
          () => post(env, '/api/v1/workflows', workflow({ steps: [{ title: 'ok', details: bad }] })),
          'steps.0.details',
        ],
      ];
      // A URL's query is bytes decoded as UTF-8: it can carry a NUL (%00) but never an unpaired surrogate.
      if (bad.includes('\u0000')) {
        cases.push(
          ['posts tag', () => authed(env.api().get('/api/v1/content/posts?tag=a%00b')), 'tag'],
          ['leads cursor', () => authed(env.api().get('/api/v1/leads')).query({ cursor: bad }), 'cursor'],
        );
      }
      for (const [what, send, field] of cases) {
        const res = await send();
        expect(res.status, what).toBe(400);
        expectError(res, 400, `${field} ${TEXT_RULE}`);
      }
      expect(await auditCount(env)).toBe(before);
      const card = await cardRow(env, approval.id);
      expect(card.status).toBe('pending');
    });
  }

  it('keeps a bad conversion event its own verdict: the others are kept (200 with per-event invalid)', async ({ env }) => {
    const ok = { eventId: 'e1', name: 'signup', occurredAt: Date.now() };
    const res = await post(env, '/api/v1/measurement/events', {
      events: [ok, { ...ok, eventId: 'e2', visitId: 'v\u0000' }, { ...ok, eventId: 'e3', properties: { plan: '\ud800' } }],
    });
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { outcome: string }) => e.outcome)).toEqual(['accepted', 'invalid', 'invalid']);
    expect(res.body.events[1].reason).toBe(`visitId ${TEXT_RULE}`);
  });
});

describe('ids Postgres cannot store are unknown ids', () => {
  it('answers %00 and a percent-encoded unpaired surrogate in a path id with 404', async ({ env }) => {
    for (const id of ['%00', 'a%00b', '%ED%A0%80']) {
      for (const path of [`/api/v1/review/${id}`, `/api/v1/leads/${id}`, `/api/v1/agent/messages/${id}`, `/api/v1/content/posts/${id}`]) {
        expectError(await authed(env.api().get(path)), 404, 'not found');
      }
      const dismissed = await post(env, `/api/v1/review/${id}/dismiss`, {});
      expectError(dismissed, 404, 'not found');
      expectError(await env.api().post(`/api/webhook/hook/${id}`).set('Content-Type', 'application/json').send('{}'), 404, 'not found');
    }
  });

  it('answers a tracked link whose code cannot be percent-decoded with a JSON 404, not a 500 page', async ({ env }) => {
    for (const path of ['/l/%', '/l/%ZZ', '/l/a%E0%A4%A', '/l/%ZZ/']) {
      const res = await env.api().get(path);
      expectError(res, 404, 'not found');
    }
  });
});

describe('a body its Content-Encoding cannot undo is a 400', () => {
  it('answers corrupt and truncated gzip, deflate and br bodies with 400', async ({ env }) => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await post(env, '/api/v1/agent/messages', '{"text":"hi"}')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding);
      expectError(res, 400, 'body could not be decompressed: it does not match its content-encoding');
    }
    const json = Buffer.from(JSON.stringify({ entries: ['x@example.com'] }));
    for (const [encoding, bytes] of [
      ['gzip', gzipSync(json).subarray(0, 12)],
      ['br', brotliCompressSync(json).subarray(0, 5)],
    ] as const) {
      const res = await authed(env.api().post('/api/v1/blocklist'))
        .set('Content-Type', 'application/octet-stream')
        .set('Content-Encoding', encoding)
        .send(bytes);
      expect(res.status, encoding).toBeGreaterThanOrEqual(400);
      expect(res.status, encoding).toBeLessThan(500);
    }
  });
});

describe('JSON nested deeper than the edge takes is a 400 on every JSON route', () => {
  it('refuses 65 levels and any deeper before a schema or a handler sees it, and takes 64', async ({ env }) => {
    const before = await auditCount(env);
    for (const depth of [65, 4_000, 100_000]) {
      for (const [path, text] of [
        ['/api/v1/agent/messages', `{"text":"hi","deep":${nested(depth - 1)}}`],
        ['/api/v1/measurement/events', `{"events":[{"eventId":"e","name":"n","occurredAt":1,"properties":{"p":${nested(depth - 4)}}}]}`],
        ['/api/v1/blocklist', nested(depth)],
      ] as const) {
        const res = await post(env, path, text).set('Content-Type', 'application/json');
        expectError(res, 400, DEPTH_RULE);
      }
    }
    expect(await auditCount(env)).toBe(before);
    const atLimit = await post(env, '/api/v1/agent/messages', `{"text":"hi","deep":${nested(63)}}`).set('Content-Type', 'application/json');
    expect(atLimit.status).toBe(202);
  });
});

describe('the bearer scheme is case-insensitive (RFC 9110)', () => {
  it('takes bearer, BEARER and Bearer, and still refuses another scheme or no token', async ({ env }) => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      const res = await env.api().get('/api/v1/me').set('Authorization', `${scheme} ${tenant.token}`);
      expect(res.status, scheme).toBe(200);
    }
    for (const header of [`Basic ${tenant.token}`, 'Bearer', `Bearer${tenant.token}`, `Bearer ${tenant.token} extra`]) {
      expectError(await env.api().get('/api/v1/me').set('Authorization', header), 401, 'unauthorized');
    }
  });
});
