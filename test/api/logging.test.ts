import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { it, type TestEnv } from '../helpers/fixture.js';

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

  it('makes up a request id when the client sends none or an unsafe one', async () => {
    const res = await env.api().get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
