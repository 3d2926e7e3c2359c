/**
 * Round trips per operation (the capacity model of docs/scaling.md): how many Postgres round trips
 * and Redis commands one API request costs, counted exactly rather than timed.
 * - Postgres: the API process talks to Postgres through a loopback proxy that counts the client's
 *   Sync ('S') and simple Query ('Q') messages: each is one round trip on the wire protocol.
 * - Redis: the API process has a Redis of its own (a private redis-server on a free port), whose
 *   command statistics are reset before each operation and read after it.
 * Each operation runs sequentially after a warm-up, so a figure is per request with nothing batched
 * (under load the limiter's group commit shares one Redis call among requests of an account).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { trackedCodes } from '../src/measurement/links.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { createHook } from '../src/webhooks/webhooks.service.js';
import pg from 'pg';
import { cpuSince, fmt, freePort, startServer, stop, treeCpuMs, NO_RATE_LIMITS } from './lib.js';
import type { BenchContext, Section } from './run.js';

/** Enough one-at-a-time requests that /proc's 10 ms CPU ticks resolve 10 µs per request. */
const RUNS = 1000;
const SSL_OR_GSS = new Set([80877103, 80877104]);

/** Counts the messages in a client's stream that are each one round trip; answers the bytes not yet complete. */
type Counter = (pending: Buffer, state: { started: boolean }, count: () => void) => Buffer;

/** Postgres: Sync ('S') and simple Query ('Q') messages, after the untyped start-up (and SSL/GSS requests). */
const postgresTrips: Counter = (buffer, state, count) => {
  let pending = buffer;
  for (;;) {
    if (!state.started) {
      if (pending.length < 8) break;
      const len = pending.readInt32BE(0);
      if (pending.length < len) break;
      if (!SSL_OR_GSS.has(pending.readInt32BE(4))) state.started = true;
      pending = pending.subarray(len);
      continue;
    }
    if (pending.length < 5) break;
    const len = pending.readInt32BE(1) + 1;
    if (pending.length < len) break;
    const type = String.fromCharCode(pending[0]!);
    if (type === 'S' || type === 'Q') count();
    pending = pending.subarray(len);
  }
  return pending;
};

/** Redis: each command a client sends (a RESP array of bulk strings), pipelined ones one by one. */
const redisCommands: Counter = (buffer, _state, count) => {
  let pending = buffer;
  for (;;) {
    let at = pending.indexOf('\r\n');
    if (pending[0] !== 0x2a || at < 0) break;
    let parts = Number(pending.subarray(1, at).toString());
    let pos = at + 2;
    while (parts > 0) {
      at = pending.indexOf('\r\n', pos);
      if (at < 0) break;
      const len = Number(pending.subarray(pos + 1, at).toString());
      if (pending.length < at + 2 + len + 2) break;
      pos = at + 2 + len + 2;
      parts--;
    }
    if (parts > 0) break;
    count();
    pending = pending.subarray(pos);
  }
  return pending;
};

/** A TCP proxy counting the client's round trips with `counter`. */
async function countingProxy(
  target: { host: string; port: number },
  counter: Counter,
): Promise<{ port: number; count: () => number; close: () => void }> {
  let trips = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const state = { started: false };
    let pending: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = counter(Buffer.concat([pending, chunk]), state, () => trips++);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, count: () => trips, close: () => server.close() };
}

async function privateRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  for (let i = 0; i < 50; i++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  probe.disconnect();
  return child;
}

/** Calls per command since the last reset, and their sum. */
async function redisCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm))
    if (!['config|resetstat', 'info'].includes(m[1]!)) calls += Number(m[2]);
  return calls;
}

interface Operation {
  name: string;
  request: (i: number) => Promise<Response>;
  expect: number;
}

export async function roundTrips(ctx: BenchContext): Promise<Section> {
  const [pRedis, pApi] = await Promise.all([freePort(), freePort()]);
  const redisServer = await privateRedis(pRedis);
  const redisUrl = `redis://127.0.0.1:${pRedis}`;
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, REDIS_URL: redisUrl, QUEUE_PREFIX: '{benchtrips}' });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  await migrate(db);
  const account = await createAccount(db, 'Bench round trips');
  await seedReviewCards(db, account.id);
  const dismissable: string[] = [];
  for (let i = 0; i < RUNS / 8 + 5; i++) dismissable.push(...(await seedReviewCards(db, account.id)).map((c) => c.id));
  const now = Date.now();
  await db('posts').insert({
    id: 'post_trips',
    account_id: account.id,
    slug: 'trips',
    status: 'published',
    title: 'Round trips',
    excerpt: 'e',
    markdown: 'm',
    html: '<p>m</p>',
    tags: [],
    author: 'a',
    published_at: now,
    updated_at: now,
    created_at: now,
  });
  const destination = 'https://www.example.com/pricing';
  const source = {
    accountId: account.id,
    channel: 'email',
    sourceType: 'send' as const,
    cardId: null,
    leadId: null,
    sourceId: 'send_trips',
  };
  const code = (await trackedCodes(db, `http://127.0.0.1:${pApi}`, source, [destination])).get(destination)!;
  const { token } = await mintToken(db, config.tokenPrefix, {
    accountId: account.id,
    label: 'bench',
    scopes: ['review:read', 'review:write', 'agent:message', 'content:read', 'measurement:write'],
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const { url: hookUrl } = await createHook({ config, db, redis }, `http://127.0.0.1:${pApi}`, { accountId: account.id, label: 'bench' });
  await db.destroy();

  const pgUrl = new URL(config.databaseUrl);
  const proxy = await countingProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) }, postgresTrips);
  const redisProxy = await countingProxy({ host: '127.0.0.1', port: pRedis }, redisCommands);
  const viaProxy = new URL(config.databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  const base = `http://127.0.0.1:${pApi}`;
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: viaProxy.toString(),
      REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
      QUEUE_PREFIX: '{benchtrips}',
      PORT: String(pApi),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'info',
      ...NO_RATE_LIMITS,
      WEBHOOK_HOOK_PER_HOUR: '100000000',
      WEBHOOK_ACCOUNT_PER_HOUR: '100000000',
    },
    `${base}/healthz`,
  );
  const auth = { Authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const etag = (await fetch(`${base}/api/v1/content/posts/trips`, { headers: auth })).headers.get('etag') ?? '';
  const ops: Operation[] = [
    { name: 'GET /api/v1/me', request: () => fetch(`${base}/api/v1/me`, { headers: auth }), expect: 200 },
    { name: 'GET /api/v1/review (8 cards a page)', request: () => fetch(`${base}/api/v1/review?limit=8`, { headers: auth }), expect: 200 },
    {
      name: 'GET /api/v1/content/posts/{slug} (304)',
      request: () => fetch(`${base}/api/v1/content/posts/trips`, { headers: { ...auth, 'If-None-Match': etag } }),
      expect: 304,
    },
    {
      name: 'GET /l/{code} (302, a visit recorded)',
      request: () =>
        fetch(`${base}/l/${code}`, { redirect: 'manual', headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' } }),
      expect: 302,
    },
    {
      name: 'POST /api/v1/review/{id}/dismiss (a card write)',
      request: (i) => fetch(`${base}/api/v1/review/${dismissable[i]}/dismiss`, { method: 'POST', headers: auth, body: '{}' }),
      expect: 200,
    },
    {
      name: 'POST /api/v1/agent/messages (a turn queued)',
      request: (i) =>
        fetch(`${base}/api/v1/agent/messages`, { method: 'POST', headers: auth, body: JSON.stringify({ text: `note ${i}` }) }),
      expect: 202,
    },
    {
      name: 'POST /api/webhook/hook/{token} (a delivery accepted)',
      request: (i) => fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: i }) }),
      expect: 202,
    },
    {
      name: 'POST /api/v1/measurement/events (10 events)',
      request: (i) =>
        fetch(`${base}/api/v1/measurement/events`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({
            events: Array.from({ length: 10 }, (_, k) => ({ eventId: `t-${i}-${k}`, name: 'signup', occurredAt: now - 60_000 })),
          }),
        }),
      expect: 200,
    },
  ];
  const rows: string[] = [];
  // Postgres's side: the backends serving this database (the API's pool and the posts listener).
  const admin = new pg.Client({ connectionString: ctx.databaseUrl });
  await admin.connect();
  const database = new URL(config.databaseUrl).pathname.slice(1);
  const backends = async () =>
    (
      await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, [
        database,
      ])
    ).rows
      .map((r) => r.pid)
      .filter((pid) => pid !== (admin as unknown as { processID: number }).processID);
  try {
    for (const op of ops) {
      let offset = 0; // each operation its own cards and event ids
      // Warm-up: the token remembered, pools connected, statements planned.
      for (let i = 0; i < 3; i++) await (await op.request(offset++)).arrayBuffer();
      await redis.config('RESETSTAT');
      const apiCpu = treeCpuMs(api.pid!);
      const redisCpu = await cpuSince(async () => [redisServer.pid!]);
      const pgCpu = await cpuSince(backends);
      const pgBefore = proxy.count();
      const redisBefore = redisProxy.count();
      let wrong = 0;
      for (let i = 0; i < RUNS; i++) {
        const res = await op.request(offset++);
        await res.arrayBuffer();
        if (res.status !== op.expect) wrong++;
      }
      // Work the request left for later (batched last-used stamps, visit writes) lands within this wait.
      await new Promise((r) => setTimeout(r, 400));
      const pgTrips = (proxy.count() - pgBefore) / RUNS;
      const us = (ms: number) => fmt((ms * 1000) / RUNS);
      const cpu = `${us(treeCpuMs(api.pid!) - apiCpu)} | ${us(await pgCpu())} | ${us(await redisCpu())}`;
      const redisSent = (redisProxy.count() - redisBefore) / RUNS;
      const redisRun = (await redisCalls(redis)) / RUNS;
      const unexpected = wrong ? `${wrong} of ${RUNS}` : '0';
      rows.push(`| ${op.name} | ${fmt(pgTrips, 2)} | ${fmt(redisSent, 2)} | ${fmt(redisRun, 2)} | ${cpu} | ${unexpected} |`);
    }
  } finally {
    await stop(api);
    redis.disconnect();
    proxy.close();
    redisProxy.close();
    await admin.end();
    redisServer.kill('SIGKILL');
  }
  return {
    title: 'Round trips per request',
    body: [
      `One API process (logging at info, as shipped); each operation ${RUNS} times one after another after a warm-up,`,
      'averaged. Postgres round trips counted',
      'by a loopback proxy (Sync and Query messages), Redis commands sent by another (each command of a pipeline counted),',
      "and the commands Redis ran from a private redis-server's statistics (the calls inside Lua scripts included). Background",
      'work a request leaves (last-used stamps, visit group commits) is counted with it. CPU per request, one at a time',
      "(so nothing is shared, unlike under load): the API process, the database's Postgres backends, the private Redis.",
      '',
      "| request | Postgres round trips | Redis commands sent | Redis commands run (scripts' calls included) | " +
        'API CPU µs | Postgres CPU µs | Redis CPU µs | unexpected statuses |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
    ].join('\n'),
  };
}
