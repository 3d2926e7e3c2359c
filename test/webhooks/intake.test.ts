import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { WebhookAccepted } from '../../api/routes/webhook.schemas.js';
import { createLogger } from '../../src/logger.js';
import { liveHooks } from '../../src/webhooks/live-hooks.js';
import { deleteHook, disableHook, regenerateHook } from '../../src/webhooks/webhooks.service.js';
import { it } from '../helpers/fixture.js';
import { deliveryRows, expectError, makeHook, postJson, postRaw, rawPost } from './helpers.js';
import { rows } from '../helpers/rows.js';

const logLines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    logLines.push(String(chunk));
    done();
  },
});

let accountId: string;
let hook: Awaited<ReturnType<typeof makeHook>>;
// High limits: this file is about the endpoint's answers, limits.test.ts about the limits.
it.override('options', { env: { WEBHOOK_HOOK_PER_HOUR: '10000', WEBHOOK_ACCOUNT_PER_HOUR: '10000' }, logger: createLogger('trace', sink) });
it.beforeAll(async ({ env }) => {
  ({ accountId } = await env.tenant());
  hook = await makeHook(env, accountId);
});

/** A JSON string value whose serialised form is exactly `bytes` bytes. */
const jsonOfBytes = (bytes: number) => JSON.stringify('x'.repeat(bytes - 2));

describe('POST /api/webhook/hook/whk_<token>', () => {
  it('answers 202 with the delivery id and logs the delivery as Accepted', async ({ env }) => {
    const res = await postJson(env, hook.path, { email: 'ada@example.com' });
    expect(res.status).toBe(202);
    const body = WebhookAccepted.parse(res.body);
    const [row] = await rows(env, 'webhook_deliveries', { id: body.deliveryId });
    expect(row).toMatchObject({
      hook_id: hook.hookId,
      account_id: accountId,
      outcome: 'Accepted',
      bytes: 27,
      body: '{"email":"ada@example.com"}',
    });
  });

  it('accepts any JSON value: object, array, string, number, boolean, null', async ({ env }) => {
    for (const text of ['{"a":1}', '[1,2,3]', '"just a string"', '42', '-1.5e3', 'true', 'null', ' \n{"spaced": true}\n ']) {
      const res = await postRaw(env, hook.path, text);
      expect(res.status, text).toBe(202);
    }
  });

  it('accepts JSON content types with parameters and +json suffixes', async ({ env }) => {
    expect((await postRaw(env, hook.path, '{}', 'application/json; charset=utf-8')).status).toBe(202);
    expect((await postRaw(env, hook.path, '{}', 'application/vnd.sender+json')).status).toBe(202);
  });

  it('answers 400 when the body is empty, not JSON, not UTF-8 or not sent as JSON', async ({ env }) => {
    expectError(await postRaw(env, hook.path, ''), 400, 'body must not be empty; send a JSON value');
    expectError(await postRaw(env, hook.path, '   '), 400, 'body must not be empty; send a JSON value');
    expectError(await env.api().post(hook.path), 400, 'body must not be empty; send a JSON value');
    expectError(await postRaw(env, hook.path, '{"a":'), 400, 'body must be JSON');
    expectError(await postRaw(env, hook.path, 'hello'), 400, 'body must be JSON');
    expect(await rawPost(env, hook.path, { 'content-type': 'application/json' }, Buffer.from([0x22, 0xff, 0xfe, 0x22]))).toEqual({
      status: 400,
      body: { error: 'body must be UTF-8 JSON' },
    });
    expectError(await postRaw(env, hook.path, '{"a":1}', 'text/plain'), 400, 'content-type must be application/json');
    expectError(await postRaw(env, hook.path, 'a=1', 'application/x-www-form-urlencoded'), 400, 'content-type must be application/json');
    expect(await rawPost(env, hook.path, {}, Buffer.from('{"a":1}'))).toEqual({
      status: 400,
      body: { error: 'content-type must be application/json' },
    });
    expect(await rawPost(env, hook.path, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, Buffer.from('{}'))).toEqual({
      status: 400,
      body: { error: 'body must not be compressed (content-encoding must be identity)' },
    });
  });

  it('accepts exactly 64,000 bytes and answers 413 for 64,001 and 65,536', async ({ env }) => {
    const at = jsonOfBytes(64_000);
    expect(Buffer.byteLength(at)).toBe(64_000);
    expect((await postRaw(env, hook.path, at)).status).toBe(202);
    expectError(await postRaw(env, hook.path, jsonOfBytes(64_001)), 413, 'body must be at most 64,000 bytes');
    expectError(await postRaw(env, hook.path, jsonOfBytes(65_536)), 413, 'body must be at most 64,000 bytes');
    // Multi-byte characters: the limit is bytes, not characters.
    expectError(await postRaw(env, hook.path, JSON.stringify('é'.repeat(32_000))), 413, 'body must be at most 64,000 bytes');
  });

  it('refuses an oversized chunked body without reading it whole, and logs nothing for it', async ({ env }) => {
    const before = (await deliveryRows(env, hook.hookId)).length;
    const server = http.createServer(env.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    let sent = 0;
    let answered = false;
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: hook.path,
        headers: { 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        answered = true;
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      // The server closes the connection after answering; a reset while we still write is expected.
      req.on('error', (err) => (answered ? undefined : reject(err)));
      // An endless body (up to 50 MB): the answer must come long before its end.
      const chunk = Buffer.alloc(16_384, 0x20);
      const pump = () => {
        while (!answered && sent < 50_000_000) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      req.write('"');
      pump();
    });
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    expect(status).toBe(413);
    expect(sent).toBeLessThan(5_000_000);
    expect((await deliveryRows(env, hook.hookId)).length).toBe(before);
  });

  it('answers the same 404 for unknown, disabled, regenerated and malformed URLs', async ({ env }) => {
    const { accountId: other } = await env.tenant();
    const disabled = await makeHook(env, other, 'disabled');
    await disableHook(env.deps, disabled.hookId);
    const regenerated = await makeHook(env, other, 'regen');
    const { url: fresh } = await regenerateHook(env.deps, env.config.baseUrl, regenerated.hookId);
    const paths = {
      unknown: `/api/webhook/hook/whk_${'A'.repeat(40)}`,
      disabled: disabled.path,
      regenerated: regenerated.path,
      noPrefix: `/api/webhook/hook/${'A'.repeat(44)}`,
      bearerShaped: '/api/webhook/hook/gat_abc',
    };
    const answers = [];
    for (const path of Object.values(paths)) {
      const res = await postJson(env, path, { a: 1 });
      expectError(res, 404, 'not found');
      const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
      answers.push({ headers, text: res.text });
    }
    for (const a of answers) expect(a).toEqual(answers[0]);
    // The new URL works; the old one is one of the 404s above.
    expect((await postJson(env, new URL(fresh).pathname, { a: 1 })).status).toBe(202);
    // The token is judged before the body: a dead URL is the same 404 whatever its body.
    expectError(await postRaw(env, paths.disabled, 'not json'), 404, 'not found');
    expectError(await postRaw(env, paths.unknown, 'not json'), 404, 'not found');
    expectError(await postRaw(env, new URL(fresh).pathname, 'not json'), 400, 'body must be JSON');
  });

  it(
    'refuses a token no live hook has (unknown, disabled, deleted, regenerated away) without a Postgres statement, however ' + 'many come',
    async ({ env }) => {
      const { accountId: other } = await env.tenant();
      const disabled = await makeHook(env, other, 'disabled-f');
      await disableHook(env.deps, disabled.hookId);
      const deleted = await makeHook(env, other, 'deleted-f');
      await deleteHook(env.deps, deleted.hookId);
      const regenerated = await makeHook(env, other, 'regen-f');
      await regenerateHook(env.deps, env.config.baseUrl, regenerated.hookId);
      const live = await makeHook(env, other, 'live-f');
      // This process reads the live-hooks registry once Redis holds it (the first lookup fills it).
      await liveHooks(env.deps).ready();
      // Every statement borrows a connection from the app's own pool: count the borrowings.
      const pool = (env.deps.db.client as unknown as { pool: EventEmitter }).pool;
      let statements = 0;
      const count = () => void statements++;
      pool.on('acquireRequest', count);
      try {
        // The control: a live hook's delivery is logged, so the counter sees the intake's statements.
        expect((await postJson(env, live.path, { control: true })).status).toBe(202);
        expect(statements).toBeGreaterThan(0);
        statements = 0;
        const kinds = { disabled: disabled.path, deleted: deleted.path, regenerated: regenerated.path };
        const answers: Record<string, unknown> = {};
        const flood = Array.from(
          { length: 200 },
          (_, i) => [`unknown-${i}`, `/api/webhook/hook/whk_${String(i).padStart(40, 'Z')}`] as const,
        );
        for (const [kind, path] of [...flood, ...Object.entries(kinds), ...Object.entries(kinds)]) {
          const res = await postJson(env, path, { kind });
          expectError(res, 404, 'not found');
          const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
          answers[kind.replace(/-\d+$/, '')] = { headers, text: res.text };
        }
        expect(statements).toBe(0);
        // One answer for every kind: same status, body and headers.
        expect(new Set(Object.values(answers).map((a) => JSON.stringify(a))).size).toBe(1);
      } finally {
        pool.removeListener('acquireRequest', count);
      }
    },
  );

  it('keeps hook tokens out of every log line and every later answer', async ({ env }) => {
    const fresh = await makeHook(env, accountId, 'logged');
    await postJson(env, fresh.path, { x: 1 });
    await postRaw(env, fresh.path, 'nope');
    await postJson(env, `${fresh.path}x`, { x: 1 });
    const all = logLines.join('');
    expect(all).not.toContain(fresh.token);
    expect(all).not.toContain(fresh.token.slice(4, 30));
    expect(all).toContain('"route":"/api/webhook/hook/{hookToken}"');
    const stored = JSON.stringify(await rows(env, 'webhook_hooks', { id: fresh.hookId }));
    expect(stored).not.toContain(fresh.token.slice(4));
  });

  it('is published in /openapi.json without bearer auth, with its statuses', async ({ env }) => {
    const doc = (await env.api().get('/openapi.json')).body;
    const op = doc.paths['/api/webhook/hook/{hookToken}'].post;
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses).sort()).toEqual(['202', '400', '404', '408', '413', '429', '431', '500', '502', '503']);
  });
});
