import net from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, describe, expect } from 'vitest';
import { startApi, type ApiServer } from '../../api/server.js';
import { createInboundUrl } from '../../src/inbound/intake.service.js';
import { createLogger } from '../../src/logger.js';
import { metrics } from '../../src/metrics/registry.js';
import { liveInbound } from '../../src/inbound/live-inbound.js';
import { createHook } from '../../src/webhooks/webhooks.service.js';
import { liveHooks } from '../../src/webhooks/live-hooks.js';
import { it } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { rawMessage } from '../helpers/smtp-client.js';

// The API's own HTTP server over raw sockets: `Expect: 100-continue`, the hook token before the body,
// connection time limits, and a request the client gave up on.

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let api: ApiServer;
it.override('options', {
  logger: createLogger('info', sink),
  env: { PORT: '0', HOST: '127.0.0.1', HTTP_HEADERS_TIMEOUT_MS: '400', INBOUND_ACCOUNT_STORAGE_BYTES: '1', METRICS_PORT: '0' },
});
it.beforeAll(async ({ env }) => {
  api = await startApi(env.deps);
  await Promise.all([liveInbound(env.deps).ready(), liveHooks(env.deps).ready()]);
});
afterAll(async () => {
  await api?.close();
});

/** A raw connection: what it has received so far, and whether the server closed it. */
function connect(): Promise<{ socket: net.Socket; received: () => string; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let text = '';
    let ended = false;
    const socket = net.connect(api.port, '127.0.0.1', () => resolve({ socket, received: () => text, closed: () => ended }));
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('close', () => {
      ended = true;
    });
    socket.on('error', reject);
  });
}

const until = (check: () => boolean, what: string) => waitFor(async () => check(), what, 15_000);

/** A POST's head with `Expect: 100-continue`, its body not sent. */
const head = (path: string, type: string, length: number) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

const statusOf = (text: string) => /HTTP\/1\.1 (\d{3})(?![\s\S]*HTTP\/1\.1 )/.exec(text)?.[1];

describe('Expect: 100-continue on the inbound URL', () => {
  it('answers a refusal before 100 Continue, and says 100 Continue only once it reads the body', async ({ env }) => {
    const { accountId } = await env.tenant();
    const path = new URL((await createInboundUrl(env.deps, accountId)).url).pathname;
    const message = rawMessage({ body: 'hello' });

    // A known secret with room: 100 Continue, then the body, then 202.
    const ok = await connect();
    ok.socket.write(head(path, 'message/rfc822', message.length));
    await until(() => ok.received().includes('100 Continue'), '100 Continue');
    ok.socket.write(message);
    await until(() => statusOf(ok.received()) === '202', 'the 202');
    ok.socket.destroy();

    // Now over INBOUND_ACCOUNT_STORAGE_BYTES: the 429 comes with no 100 Continue before it.
    const full = await connect();
    full.socket.write(head(path, 'message/rfc822', message.length));
    await until(() => /HTTP\/1\.1 4\d\d/.test(full.received()), 'the refusal');
    expect(full.received()).not.toContain('100 Continue');
    expect(full.received()).toMatch(/^HTTP\/1\.1 429 /);
    expect(full.received()).toContain('Retry-After: 3600');
    full.socket.destroy();

    // An unknown secret: 404, no 100 Continue.
    const unknown = await connect();
    unknown.socket.write(head(`/api/mail/inbound/inb_${'Z'.repeat(40)}`, 'message/rfc822', message.length));
    await until(() => /HTTP\/1\.1 4\d\d/.test(unknown.received()), 'the 404');
    expect(unknown.received()).toMatch(/^HTTP\/1\.1 404 /);
    unknown.socket.destroy();
  });
});

describe('the hook URL', () => {
  it('answers a dead token 404 without reading the body, and a live one after 100 Continue', async ({ env }) => {
    const { accountId } = await env.tenant();
    const dead = await connect();
    // The head promises 60,000 bytes and none follow: the answer cannot wait for them.
    dead.socket.write(
      `POST /api/webhook/hook/whk_${'D'.repeat(40)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n`,
    );
    await until(() => statusOf(dead.received()) !== undefined, 'the answer');
    expect(dead.received()).toMatch(/^HTTP\/1\.1 404 /);
    dead.socket.destroy();

    const { url } = await createHook(env.deps, 'http://127.0.0.1', { accountId, label: 'doors' });
    const body = '{"ok":true}';
    const live = await connect();
    live.socket.write(head(new URL(url).pathname, 'application/json', body.length));
    await until(() => live.received().includes('100 Continue'), '100 Continue');
    live.socket.write(body);
    await until(() => statusOf(live.received()) === '202', 'the 202');
    live.socket.destroy();
  });
});

describe('connection time limits', () => {
  it('closes a connection whose headers do not arrive within HTTP_HEADERS_TIMEOUT_MS, with a JSON 408', async () => {
    const slow = await connect();
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    await until(() => slow.closed(), 'the server to close the connection');
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.received()).toContain('{"error":"request was not sent in time"}');

    // A connection that sends nothing at all is closed too.
    const silent = await connect();
    await until(() => silent.closed(), 'the server to close the silent connection');
  });
});

describe('a request the client gave up on', () => {
  it('is logged and counted as 499, not as the status it was about to get', async ({ env }) => {
    const { accountId } = await env.tenant();
    const path = new URL((await createInboundUrl(env.deps, accountId)).url).pathname;
    const aborted = async () =>
      (await metrics.publicDoor.get()).values.find((v) => v.labels.door === 'inbound_url' && v.labels.outcome === 'aborted')?.value ?? 0;
    const before = await aborted();
    const c = await connect();
    c.socket.write(head(path, 'message/rfc822', 1_000));
    await until(() => c.received().includes('100 Continue'), '100 Continue');
    c.socket.write('From: half');
    c.socket.destroy();
    await until(() => lines.some((l) => l.includes('"statusCode":499')), 'the 499 line');
    const line = JSON.parse(lines.find((l) => l.includes('"statusCode":499'))!);
    expect(line).toMatchObject({
      msg: 'request aborted',
      req: { method: 'POST', route: '/api/mail/inbound/{secret}' },
      res: { statusCode: 499 },
    });
    expect(lines.join('')).not.toContain(path.split('/').pop()!.slice(4));
    expect(await aborted()).toBe(before + 1);
  });
});
