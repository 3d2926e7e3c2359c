import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginCardWrite } from '../../src/queue-version/card-writes.js';
import { queueVersionKeys } from '../../src/queue-version/keys.js';
import { keyspace } from '../../src/redis.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { envFor, setupTestEnv, type TestEnv } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { holdTable } from '../helpers/locks.js';
import { privateRedis, tcpProxy } from '../helpers/outages.js';
import { run, until } from '../helpers/processes.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';
import { auth } from '../helpers/auth.js';

/**
 * GET /review served from an API process's page cache stays read-your-writes across processes
 * (docs/decisions/stores.md, "Reads that skip Postgres"). Two real API processes share one private Redis
 * (FLUSHALL here touches no one else's keys); B reaches it through a proxy the tests can cut. A page
 * is proved to come from B's cache by answering while the cards table is locked: any read of it
 * would wait for the lock.
 */

const SLOW = 180_000;
let redis: Awaited<ReturnType<typeof privateRedis>>;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
// Kept: this file's env is built on the private Redis made just before it (the fixture's env uses the shared one).
let env: TestEnv;
let direct: Redis;
const procs: ServiceProcess[] = [];
let portA = 0;
let portB = 0;

beforeAll(async () => {
  redis = await privateRedis();
  proxy = await tcpProxy(Number(new URL(redis.url).port));
  env = await setupTestEnv({ env: { REDIS_URL: redis.url } });
  direct = new Redis(redis.url);
  const start = (redisUrl: string) => {
    const proc = startService(['api'], { ...envFor(env.config), REDIS_URL: redisUrl, PORT: '0', LOG_LEVEL: 'info' });
    procs.push(proc);
    return proc.port(90_000);
  };
  [portA, portB] = await Promise.all([start(redis.url), start(`redis://127.0.0.1:${proxy.port}`)]);
}, SLOW);

afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  direct?.disconnect();
  await env?.close();
  await proxy?.close();
  await redis?.stop();
});

interface Item {
  id: string;
  title: string;
  status: string;
}

async function get(port: number, token: string, query = ''): Promise<Item[]> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/review${query}`, { headers: auth(token) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Item[] }).items;
}

/** GET /review on `port` with the cards table locked: `cached` when it answered anyway, false when it waited on Postgres. */
async function look(port: number, token: string, query = ''): Promise<{ cached: boolean; items: Item[] }> {
  const hold = await holdTable(env.deps.db, 'review_cards');
  try {
    let answered = false;
    const answer = get(port, token, query).finally(() => (answered = true));
    const blocked = (async () => {
      while (!answered) {
        if (await hold.waiting()) return true;
        await new Promise((r) => setTimeout(r, 20));
      }
      return false;
    })();
    const waited = await Promise.race([answer.then(() => false), blocked]);
    await hold.release();
    const items = await answer;
    await blocked;
    return { cached: !waited, items };
  } finally {
    await hold.release();
  }
}

/** Reads on `port` until a page comes from its cache (a read after a write fills it); that page's items. */
async function warm(port: number, token: string, query = ''): Promise<Item[]> {
  return until(async () => {
    const seen = await look(port, token, query);
    return seen.cached && seen.items;
  }, 30_000);
}

const titles = (items: Item[]) => items.map((c) => c.title);

function post(port: number, token: string, path: string, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/api/v1/review/${path}`, {
    method: 'POST',
    headers: { ...auth(token), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Unexpired in-flight card writes of the account, by Redis's clock. */
async function inFlight(accountId: string): Promise<number> {
  const [s, us] = await direct.time();
  const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
  return direct.zcount(queueVersionKeys(keyspace(env.config.queuePrefix), accountId).writing, `(${now}`, '+inf');
}

describe('GET /review from a warm page cache, across two API processes', { timeout: SLOW }, () => {
  it('shows a write made through the other process in the very next read, every time, and the cache fills again after', async () => {
    const { token, accountId } = await env.tenant();
    for (const title of ['first', 'second', 'third']) await buildCard(env.deps.db, accountId, 'plain', { title });
    const writes: Array<[string, (id: string) => Promise<Response>]> = [
      ['approve', (id) => post(portA, token, `${id}/answer`, { action: 'approve' })],
      ['snooze', (id) => post(portA, token, `${id}/snooze`, { until: Date.now() + 3_600_000 })],
      ['dismiss', (id) => post(portA, token, `${id}/dismiss`, { reason: 'not now' })],
    ];
    for (const [verb, write] of writes) {
      const before = await warm(portB, token);
      const target = before[0]!;
      expect((await write(target.id)).status, verb).toBe(200);
      // B's cached page is warm, yet its very next read has the change: B never heard of it but through Redis.
      const after = await get(portB, token);
      expect(
        after.map((c) => c.id),
        verb,
      ).toEqual(before.slice(1).map((c) => c.id));
      expect(
        (await warm(portB, token)).map((c) => c.id),
        verb,
      ).toEqual(after.map((c) => c.id));
    }
    expect(await get(portA, token)).toEqual([]);
  });

  it('keeps one page per exact query: another limit is read from Postgres, then cached on its own', async () => {
    const { token, accountId } = await env.tenant();
    for (const title of ['one', 'two']) await buildCard(env.deps.db, accountId, 'plain', { title });
    expect(await warm(portB, token)).toHaveLength(2);
    const other = await look(portB, token, '?limit=1');
    expect(other.cached).toBe(false);
    expect(other.items).toHaveLength(1);
    expect(await warm(portB, token, '?limit=1')).toEqual(other.items);
  });

  it('shows cards written outside the API: one added by a worker-side writer, one resolved by the auto-resolve timer', async () => {
    const { token, accountId } = await env.tenant();
    const at = Date.now() - 1_000;
    const timed = await buildCard(env.deps.db, accountId, 'plain', { title: 'timed', autoResolveAt: at });
    expect(titles(await warm(portB, token))).toEqual(['timed']);
    // This test process writes as a worker does: through the repository, on a handle createDeps registered.
    await buildCard(env.deps.db, accountId, 'plain', { title: 'from the agent' });
    expect(titles(await get(portB, token)).sort()).toEqual(['from the agent', 'timed']);
    expect(titles(await warm(portB, token)).sort()).toEqual(['from the agent', 'timed']);
    expect(await autoResolve(env.deps, accountId, timed.id, at)).toBe('resolved');
    expect(titles(await get(portB, token))).toEqual(['from the agent']);
  });

  it('shows the cards the admin CLI seeds (`seed demo`, its own process) in the next read of a warm, empty queue', async () => {
    const { token, accountId } = await env.tenant();
    // `seed demo` fills demo accounts only: this one becomes one (as `seed demo --new-account` makes them).
    await env.deps.db('accounts').where({ id: accountId }).update({ demo: true });
    expect(await warm(portB, token)).toEqual([]);
    const seeded = await run(
      process.execPath,
      ['--import', 'tsx', 'bin/admin.ts', 'seed', 'demo', '--account', accountId],
      envFor(env.config),
    );
    expect(seeded.code, seeded.stderr).toBe(0);
    const cards = (JSON.parse(seeded.stdout) as { cards: { id: string }[] }).cards;
    expect((await get(portB, token)).map((c) => c.id).sort()).toEqual(cards.map((c) => c.id).sort());
    expect(await inFlight(accountId)).toBe(0);
  });

  it('shows a write whose process died between its commit and its post-bump, and caches nothing while it is in flight', async () => {
    const { token, accountId } = await env.tenant();
    await buildCard(env.deps.db, accountId, 'plain', { title: 'before' });
    expect(titles(await warm(portB, token))).toEqual(['before']);
    const died = await run(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/card-write-then-die.ts', accountId, 'orphan'],
      envFor(env.config),
    );
    expect(died.signal).toBe('SIGKILL');
    expect(died.stdout).toBe('committed\n');
    expect(await inFlight(accountId)).toBe(1);
    for (let i = 0; i < 3; i++) {
      const seen = await look(portB, token);
      expect(seen.cached).toBe(false);
      expect(titles(seen.items).sort()).toEqual(['before', 'orphan']);
    }
  });

  it("after a lost post-bump's deadline, serves from the cache again, never the page from before the write", async () => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'plain', { title: 'old title' });
    expect(titles(await warm(portB, token))).toEqual(['old title']);
    // A write's pre-bump and commit, and no post-bump ever: its process is gone. Its mark lapses in 1.5 s.
    await beginCardWrite(env.deps.db, accountId, 1_500);
    await env.deps.db('review_cards').where({ id: card.id }).update({ title: 'new title' });
    expect(titles(await get(portB, token))).toEqual(['new title']);
    await until(async () => (await inFlight(accountId)) === 0, 30_000);
    expect(titles(await get(portB, token))).toEqual(['new title']);
    expect(titles(await warm(portB, token))).toEqual(['new title']);
  });

  it('serves no page from before Redis lost its data (FLUSHALL between two reads)', async () => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'plain', { title: 'old title' });
    expect(titles(await warm(portB, token))).toEqual(['old title']);
    // A write whose bumps Redis lost with everything else: without the flush B could not tell (the control).
    await env.deps.db('review_cards').where({ id: card.id }).update({ title: 'new title' });
    expect(await look(portB, token)).toEqual({ cached: true, items: [expect.objectContaining({ title: 'old title' })] });
    await direct.flushall();
    expect(titles(await get(portB, token))).toEqual(['new title']);
    expect(titles(await warm(portB, token))).toEqual(['new title']);
  });

  it('drops the whole cache when its limiter call fails, so a write whose bumps never reached Redis is seen once it is back', async () => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'plain', { title: 'old title' });
    expect(titles(await warm(portB, token))).toEqual(['old title']);
    await env.deps.db('review_cards').where({ id: card.id }).update({ title: 'new title' });
    proxy.cut();
    try {
      // Reads go on without the limiter, from Postgres.
      expect(titles(await get(portB, token))).toEqual(['new title']);
    } finally {
      proxy.restore();
    }
    // Same epoch, same counter: only the dropped cache keeps the old page away.
    await until(async () => {
      const res = await fetch(`http://127.0.0.1:${portB}/api/v1/review`, { headers: auth(token) });
      expect(((await res.json()) as { items: Item[] }).items.map((c) => c.title)).toEqual(['new title']);
      return res.headers.has('ratelimit-remaining');
    }, 30_000);
    expect(titles(await warm(portB, token))).toEqual(['new title']);
  });

  it('shows a snoozed card once its time has come, though the page without it is cached', async () => {
    const { token, accountId } = await env.tenant();
    await buildCard(env.deps.db, accountId, 'plain', { title: 'awake' });
    const until_ = Date.now() + 6_000;
    await buildCard(env.deps.db, accountId, 'plain', { title: 'sleeper', status: 'snoozed', snoozedUntil: until_ });
    expect(titles(await warm(portB, token))).toEqual(['awake']);
    // Read until the sleeper is back (its time has come), rather than sleeping past it: the page B cached must not hide it.
    const back = await until(async () => {
      const page = titles(await get(portB, token));
      return page.includes('sleeper') && page;
    }, 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(until_);
    expect(back.sort()).toEqual(['awake', 'sleeper']);
  });
});
