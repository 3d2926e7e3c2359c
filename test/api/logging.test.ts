import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { createInboundUrl } from '../../src/inbound/intake.service.js';
import { batchedDestination, createLogger } from '../../src/logger.js';
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
    const { url } = await createInboundUrl(env.rt.db, env.config.baseUrl, accountId);
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
