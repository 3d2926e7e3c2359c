import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { createInboundUrl } from '../../src/inbound/intake.service.js';
import { batchedDestination, createLogger, prebuiltLine } from '../../src/logger.js';
import { it } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

it.override('options', { logger: createLogger('trace', sink) });

describe('logging', () => {
  it('logs each request as JSON with a request id, and never the bearer token', async ({ env }) => {
    const { token } = await env.tenant();
    const res = await env.api().get('/api/v1/me').set(auth(token)).set('X-Request-Id', 'req-abc.123');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-abc.123');
    await env
      .api()
      .get('/api/v1/me')
      .set(auth(`${token}x`));
    const all = lines.join('');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(4, 24));
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'req-abc.123');
    expect(entry).toMatchObject({ req: { method: 'GET', route: '/api/v1/me' }, res: { statusCode: 200 } });
  });

  it('logs a hook URL as its route template, never its token', async ({ env }) => {
    const secret = 'whk_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef';
    await env.api().post(`/api/webhook/hook/${secret}?x=1`).set('X-Request-Id', 'req-hook-1').send({ a: 1 });
    const all = lines.join('');
    expect(all).not.toContain(secret.slice(4));
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'req-hook-1');
    expect(entry.req.route).toBe('/api/webhook/hook/{hookToken}');
  });

  it('cuts inbound mail URL secrets out of logged URLs, and never logs a received message', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { url } = await createInboundUrl(env.deps, accountId);
    const secret = url.split('/').pop()!;
    const res = await env
      .api()
      .post(new URL(url).pathname)
      .set('Content-Type', 'message/rfc822')
      .send('From: a@b.test\r\nSubject: private words\r\n\r\nsecret body text\r\n');
    expect(res.status).toBe(202);
    await env
      .api()
      .post(`/api/mail/inbound/inb_${'x'.repeat(40)}`)
      .set('Content-Type', 'message/rfc822')
      .send('x');
    const all = lines.join('');
    expect(all).toContain('"route":"/api/mail/inbound/{secret}"');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice(4, 24));
    expect(all).not.toMatch(/secret body text|private words/);
  });

  it('writes the request line as pino frames a line, with every field it carried', async ({ env }) => {
    const { token } = await env.tenant();
    await env.api().get('/api/v1/me?page=2').set(auth(token)).set('X-Request-Id', 'req-shape-1');
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'req-shape-1');
    expect(Object.keys(entry)).toEqual(['level', 'time', 'service', 'req', 'res', 'responseTime', 'msg']);
    expect(entry).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'growth-agent',
      req: { id: 'req-shape-1', method: 'GET', route: '/api/v1/me' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
    expect(Math.abs(entry.time - Date.now())).toBeLessThan(60_000);
  });

  it('logs the route template, never the path as sent, in any spelling of a token, secret or link code', async ({ env }) => {
    const hook = `whk_${'H'.repeat(40)}`;
    const inbound = `inb_${'I'.repeat(40)}`;
    const unsubscribe = `utk_${'Q'.repeat(32)}`;
    const code = 'Lk7Codeabcdefghij';
    const spellings: [string, 'get' | 'post', string, string][] = [
      ['hook %77', 'post', `/api/webhook/hook/%77${hook.slice(1)}`, hook.slice(4)],
      ['hook %5F', 'post', `/api/webhook/hook/whk%5F${hook.slice(4)}`, hook.slice(4)],
      ['hook case', 'post', `/API/Webhook/hook/${hook}`, hook.slice(4)],
      ['inbound %69', 'post', `/api/mail/inbound/%69${inbound.slice(1)}`, inbound.slice(4)],
      ['one-click /U/', 'get', `/U/${unsubscribe}`, unsubscribe.slice(4)],
      ['one-click /u/', 'get', `/u/${unsubscribe}?x=1`, unsubscribe.slice(4)],
      ['one-click /%75/', 'get', `/%75/${unsubscribe}`, unsubscribe.slice(4)],
      ['link', 'get', `/l/${code}?x=reader`, code],
      ['link /L/', 'get', `/L/${code}`, code],
      ['unmatched', 'get', `/nowhere/${hook}?next=${inbound}`, hook.slice(4)],
      ['query', 'get', `/healthz?next=/api/webhook/hook/${hook}&m=${inbound}&c=${code}`, inbound.slice(4)],
    ];
    for (const [name, method, path] of spellings) {
      await env
        .api()
        [method](path)
        .set('X-Request-Id', `req-spell-${name.replace(/[^a-z0-9]/gi, '-')}`);
    }
    const all = lines.join('');
    for (const [name, , , secret] of spellings) expect(all, name).not.toContain(secret);
    expect(all).not.toContain(code);
    const routes = lines
      .map((l) => JSON.parse(l))
      .filter((l) => String(l.req?.id).startsWith('req-spell-'))
      .map((l) => l.req.route);
    expect(routes).toEqual([
      '/api/webhook/hook/{hookToken}',
      '/api/webhook/hook/{hookToken}',
      '/api/webhook/hook/{hookToken}',
      '/api/mail/inbound/{secret}',
      '/u/{token}',
      '/u/{token}',
      'unmatched',
      '/l/{code}',
      '/l/{code}',
      'unmatched',
      '/healthz',
    ]);
  });

  it('makes up a request id when the client sends none or an unsafe one', async ({ env }) => {
    const res = await env.api().get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the stdout log destination', () => {
  function fileLogger() {
    const dir = mkdtempSync(path.join(tmpdir(), 'gas-log-'));
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    return {
      logger: createLogger('info', batchedDestination(fd)),
      read: () => readFileSync(file, 'utf8'),
      done: () => {
        closeSync(fd);
        rmSync(dir, { recursive: true });
      },
    };
  }

  it('writes a warn line, and the lines batched before it, before the call returns', () => {
    const { logger, read, done } = fileLogger();
    logger.info('request one');
    logger.warn('something is wrong');
    const lines = read()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).msg);
    expect(lines).toEqual(['request one', 'something is wrong']);
    logger.error('worse');
    expect(read()).toContain('"msg":"worse"');
    done();
  });

  it('writes a pre-built line like a pino line of its level: a warn at once, an info only where the level lets it', () => {
    const { logger, read, done } = fileLogger();
    prebuiltLine(logger, 'info', 'request completed')('"req":{"id":"a"}');
    expect(read()).toBe('');
    prebuiltLine(logger, 'warn', 'request aborted')('"req":{"id":"b"}');
    const written = read()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(written).toEqual([
      { level: 30, time: expect.any(Number), service: 'growth-agent', req: { id: 'a' }, msg: 'request completed' },
      { level: 40, time: expect.any(Number), service: 'growth-agent', req: { id: 'b' }, msg: 'request aborted' },
    ]);
    logger.level = 'warn';
    prebuiltLine(logger, 'info', 'request completed')('"req":{"id":"c"}');
    logger.flush();
    expect(read()).not.toContain('"c"');
    done();
  });

  it('writes a batched info line within its short time limit, and at once on flush()', async () => {
    const { logger, read, done } = fileLogger();
    logger.info('request two');
    await waitFor(async () => read().includes('"msg":"request two"'), 'the batch to be written', 10_000);
    logger.info('api listening');
    logger.flush();
    expect(read()).toContain('"msg":"api listening"');
    done();
  });
});
