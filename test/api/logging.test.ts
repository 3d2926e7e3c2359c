import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { createInboundUrl } from '../../src/inbound/intake.service.js';
import { batchedDestination, createLogger, prebuiltLine } from '../../src/logger.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let env: TestEnv;
it.override('options', { logger: createLogger('trace', sink) });
it.beforeAll(({ env: e }) => {
  env = e;
});

describe('logging', () => {
  it('logs each request as JSON with a request id, and never the bearer token', async () => {
    const { token } = await env.tenant();
    const res = await env.api().get('/api/v1/me').set('Authorization', `Bearer ${token}`).set('X-Request-Id', 'req-abc.123');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-abc.123');
    await env.api().get('/api/v1/me').set('Authorization', `Bearer ${token}x`);
    const all = lines.join('');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(4, 24));
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'req-abc.123');
    expect(entry).toMatchObject({ req: { method: 'GET', url: '/api/v1/me' }, res: { statusCode: 200 } });
  });

  it('cuts hook tokens out of logged URLs', async () => {
    const secret = 'whk_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef';
    await env.api().post(`/api/webhook/hook/${secret}?x=1`).send({ a: 1 });
    const all = lines.join('');
    expect(all).toContain('whk_[redacted]');
    expect(all).not.toContain(secret);
  });

  it('cuts inbound mail URL secrets out of logged URLs, and never logs a received message', async () => {
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
    expect(all).toContain('inb_[redacted]');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice(4, 24));
    expect(all).not.toMatch(/secret body text|private words/);
  });

  it('writes the request line as pino frames a line, with every field it carried', async () => {
    const { token } = await env.tenant();
    await env.api().get('/api/v1/me?page=2').set('Authorization', `Bearer ${token}`).set('X-Request-Id', 'req-shape-1');
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'req-shape-1');
    expect(Object.keys(entry)).toEqual(['level', 'time', 'service', 'req', 'res', 'responseTime', 'msg']);
    expect(entry).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'growth-agent',
      req: { id: 'req-shape-1', method: 'GET', url: '/api/v1/me?page=2' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
    expect(Math.abs(entry.time - Date.now())).toBeLessThan(60_000);
  });

  it('cuts one-click tokens and secrets anywhere in the URL out of the request line', async () => {
    const unsubscribe = `utk_${'Q'.repeat(32)}`;
    const hook = `whk_${'H'.repeat(32)}`;
    const inbound = `inb_${'I'.repeat(32)}`;
    await env.api().get(`/u/${unsubscribe}?x=1`).set('X-Request-Id', 'req-u-1');
    await env.api().get(`/healthz?next=/api/webhook/hook/${hook}&m=${inbound}`).set('X-Request-Id', 'req-q-1');
    await env.api().get('/healthz?q=%22%5C%22').set('X-Request-Id', 'req-quote-1');
    const all = lines.join('');
    for (const secret of [unsubscribe, hook, inbound]) expect(all).not.toContain(secret.slice(4));
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.find((l) => l.req?.id === 'req-u-1').req.url).toBe('/u/[redacted]?x=1');
    expect(parsed.find((l) => l.req?.id === 'req-q-1').req.url).toBe('/healthz?next=/api/webhook/hook/whk_[redacted]&m=inb_[redacted]');
    expect(parsed.find((l) => l.req?.id === 'req-quote-1').req.url).toBe('/healthz?q=%22%5C%22');
  });

  it('makes up a request id when the client sends none or an unsafe one', async () => {
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
