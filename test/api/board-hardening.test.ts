import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { cardWake } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/logger.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { it } from '../helpers/fixture.js';

// Bull Board hardening: wrong logins limited per address across API processes,
// read-only unless an operator opts in, and a page that loads nothing from another host.

const PASSWORD = 'correct horse';
const ADMIN = { ADMIN_USER: 'ops', ADMIN_PASSWORD: PASSWORD, ADMIN_LOGIN_MAX_FAILURES: '3', ADMIN_LOGIN_WINDOW_SECONDS: '600' };
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const GOOD = basic('ops', PASSWORD);

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One request from a chosen loopback address, so each test is its own client to the limiter. */
function call(port: number, from: string, path: string, opts: { auth?: string; method?: string; body?: unknown } = {}): Promise<Answer> {
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        localAddress: from,
        headers: { ...(opts.auth ? { authorization: opts.auth } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const servers: http.Server[] = [];
async function serve(app: Express): Promise<number> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

let second: Deps;
let portA: number;
let portB: number;
it.override('options', { env: ADMIN, logger: createLogger('info', sink) });
it.beforeAll(async ({ env }) => {
  // A second API process of the same deployment: its own connections, the same Redis and prefix.
  second = createDeps(env.config, createLogger('info', sink));
  await second.ready();
  portA = await serve(env.app);
  portB = await serve(createApp(second));
});
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await second.close();
});

describe('Bull Board login limit', () => {
  it('answers 429 with Retry-After after three wrong passwords from one address, on every API process, and logs no password', async () => {
    const attacker = '127.0.0.2';
    for (let i = 0; i < 3; i++) {
      const wrong = await call(i % 2 ? portB : portA, attacker, '/admin/queues', { auth: basic('ops', `guess-${i}`) });
      expect(wrong.status).toBe(401);
    }
    for (const port of [portA, portB]) {
      const blocked = await call(port, attacker, '/admin/queues', { auth: GOOD });
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(600);
      expect(JSON.parse(blocked.text)).toEqual({ error: 'rate limited' });
    }
    // Another address still logs in, on either process.
    expect((await call(portB, '127.0.0.3', '/admin/queues', { auth: GOOD })).status).toBe(200);
    expect((await call(portA, '127.0.0.3', '/admin/queues/api/queues', { auth: GOOD })).status).toBe(200);

    const refused = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'bull board login refused');
    expect(refused.map((l) => l.address)).toEqual([attacker, attacker, attacker]);
    expect(refused.map((l) => l.failures)).toEqual([1, 2, 3]);
    const all = lines.join('');
    for (let i = 0; i < 3; i++) expect(all).not.toContain(`guess-${i}`);
    expect(all).not.toContain(PASSWORD);
  });

  it('counts a burst of wrong logins sent at once: three answer 401, the rest 429, and the right password then 429', async () => {
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(i % 2 ? portA : portB, '127.0.0.7', '/admin/queues', { auth: basic('ops', `burst-${i}`) })),
    );
    expect(burst.filter((r) => r.status === 401)).toHaveLength(3);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(9);
    expect((await call(portA, '127.0.0.7', '/admin/queues', { auth: GOOD })).status).toBe(429);
    // Past the limit the refusals write no more log lines.
    const logged = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'bull board login refused' && l.address === '127.0.0.7');
    expect(logged).toHaveLength(3);
  });

  it('does not count a request without credentials (a browser asks the person first)', async () => {
    for (let i = 0; i < 5; i++) expect((await call(portA, '127.0.0.4', '/admin/queues')).status).toBe(401);
    expect((await call(portA, '127.0.0.4', '/admin/queues', { auth: GOOD })).status).toBe(200);
  });
});

describe('Bull Board is read-only by default', () => {
  const from = '127.0.0.5';

  it('refuses retry, promote, clean, edit, add, empty, pause and obliterate, and Redis is unchanged', async ({ env }) => {
    const queue = env.deps.queues.get('card-timers')!;
    const id = await enqueue(
      env.deps.queues,
      cardWake,
      { accountId: 'acc_ro', cardId: 'card_ro', until: Date.now() + 3_600_000 },
      { delay: 3_600_000 },
    );
    const counts = await queue.getJobCounts();
    const listed = await call(portA, from, '/admin/queues/api/queues', { auth: GOOD });
    expect((JSON.parse(listed.text).queues as Array<{ readOnlyMode: boolean }>).every((q) => q.readOnlyMode)).toBe(true);

    const base = '/admin/queues/api/queues/card-timers';
    const attempts: [string, string, unknown?][] = [
      ['PUT', `${base}/${id}/promote`],
      ['PUT', `${base}/${id}/retry`],
      ['PUT', `${base}/${id}/clean`],
      ['PATCH', `${base}/${id}/update-data`, { data: { accountId: 'x', cardId: 'y', until: 1 } }],
      ['PATCH', `${base}/${id}/delay`, { delay: 0 }],
      ['PUT', `${base}/promote`],
      ['PUT', `${base}/clean/delayed`],
      ['PUT', `${base}/retry/failed`],
      ['POST', `${base}/add`, { name: 'card.wake', data: {} }],
      ['PUT', `${base}/empty`],
      ['PUT', `${base}/pause`],
      ['PUT', '/admin/queues/api/queues/pause'],
      ['PUT', `${base}/obliterate`],
      ['DELETE', `${base}/${id}`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(portA, from, path, { auth: GOOD, method, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(JSON.parse(res.text).error).toMatch(/read-only.*ADMIN_READ_ONLY=false/);
    }

    const job = (await queue.getJob(id))!;
    expect(await job.getState()).toBe('delayed');
    expect(job.data).toEqual({ accountId: 'acc_ro', cardId: 'card_ro', until: expect.any(Number) });
    expect(await queue.isPaused()).toBe(false);
    expect(await queue.getJobCounts()).toEqual(counts);
  });

  it('lets an operator who set ADMIN_READ_ONLY=false promote a job', async ({ env }) => {
    const deps = createDeps(
      configWith({ ...ADMIN, DATABASE_URL: env.config.databaseUrl, QUEUE_PREFIX: env.config.queuePrefix, ADMIN_READ_ONLY: 'false' }),
      createLogger('silent'),
    );
    try {
      const port = await serve(createApp(deps));
      const id = await enqueue(
        deps.queues,
        cardWake,
        { accountId: 'acc_rw', cardId: 'card_rw', until: Date.now() + 3_600_000 },
        { delay: 3_600_000 },
      );
      const res = await call(port, from, `/admin/queues/api/queues/card-timers/${id}/promote`, { auth: GOOD, method: 'PUT' });
      expect(res.status).toBe(204);
      expect(await (await deps.queues.get('card-timers')!.getJob(id))!.getState()).toBe('waiting');
    } finally {
      await deps.close();
    }
  });
});

describe('Bull Board page', () => {
  const from = '127.0.0.6';
  // An address another host would serve: a scheme (http:, https:, …) or a protocol-relative //.
  const outside = (ref: string) => /^\s*(?:[a-z][a-z0-9+.-]*:)?\/\//i.test(ref) && !/^\s*data:/i.test(ref);

  it('loads nothing from another host: every href, src and CSS url() is local, and a CSP says so', async () => {
    const page = await call(portA, from, '/admin/queues', { auth: GOOD });
    expect(page.status).toBe(200);
    const refs = [...page.text.matchAll(/\b(?:href|src)\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter(outside)).toEqual([]);
    // And the browser is told so, for anything the scripts might load later.
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);

    const sheets = refs.filter((r) => r.endsWith('.css'));
    expect(sheets.length).toBeGreaterThan(0);
    for (const sheet of sheets) {
      const css = await call(portA, from, new URL(sheet, 'http://x/admin/queues/').pathname, { auth: GOOD });
      expect(css.status).toBe(200);
      const urls = [...css.text.matchAll(/url\(\s*["']?([^"')]*)|@import\s+["']([^"']*)/gi)].map((m) => m[1] ?? m[2]!);
      expect(urls.filter(outside)).toEqual([]);
    }
  });
});
