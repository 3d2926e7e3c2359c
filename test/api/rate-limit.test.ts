import { describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { routes } from '../../api/routes/index.js';
import { configWith } from '../helpers/config.js';
import { createLogger } from '../../src/logger.js';
import { createDeps } from '../../src/deps.js';
import request from 'supertest';
import { fixtureRoutes } from '../helpers/fixture-routes.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { holdTable } from '../helpers/locks.js';
import { redisAway } from '../helpers/outages.js';
import { bucketKey } from '../../src/rate-limit.js';
import { keyspace } from '../../src/redis.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { auth } from '../helpers/auth.js';
import { pollUntil } from '../helpers/processes.js';

// Small buckets so the test spends few requests: reads 60/min (1 a second) with a burst of 3.
it.override('options', {
  extraRoutes: fixtureRoutes,
  env: {
    RATE_READS_PER_MINUTE: '60',
    RATE_READS_BURST: '3',
    RATE_WRITES_PER_MINUTE: '60',
    RATE_WRITES_BURST: '2',
    RATE_ACCOUNT_PER_MINUTE: '60',
    RATE_ACCOUNT_BURST: '5',
  },
});

const me = (env: TestEnv, token: string) => env.api().get('/api/v1/me').set(auth(token));

describe('rate limits', () => {
  it('answers 429 rate limited with Retry-After once the burst is spent, and lets the next call through after waiting', async ({ env }) => {
    const { token } = await env.tenant();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await me(env, token)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await me(env, token);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate limited' });
    expect(limited.headers['cache-control']).toBe('no-store');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // Asked again until the bucket has refilled (a refused call takes nothing from it), within Retry-After and more.
    const next = await pollUntil(
      () => me(env, token),
      (res) => res.status !== 429,
      'a call let through after Retry-After',
      retryAfter * 1000 + 10_000,
      250,
    );
    expect(next.status).toBe(200);
  });

  it('refuses a GET over the limit with the error alone, and the read begun beside the limiter writes nothing', async ({ env }) => {
    // Token A's last call left it room, so its next GET begins at once; meanwhile tokens B and C of the
    // same account empty the account bucket (burst 5), so the limiter refuses that GET.
    const a = await env.tenant();
    await buildCard(env.deps.db, a.accountId, 'approval');
    const minted = async () =>
      (await mintToken(env.deps.db, env.config.tokenPrefix, { accountId: a.accountId, label: 'other', scopes: ['review:read'] })).token;
    const [b, c] = [await minted(), await minted()];
    const review = (token: string) => env.api().get('/api/v1/review').set(auth(token));
    const first = await review(a.token);
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    expect(Number(first.headers['ratelimit-remaining'])).toBeGreaterThanOrEqual(1);
    expect([(await review(b)).status, (await review(b)).status, (await review(b)).status, (await review(c)).status]).toEqual([
      200, 200, 200, 200,
    ]);
    // A due snoozed card: an admitted GET /review wakes it, so the refused one must not.
    const due = await buildCard(env.deps.db, a.accountId, 'question', { status: 'snoozed', snoozedUntil: Date.now() - 1 });
    const cards = await holdTable(env.deps.db, 'review_cards');
    let refused: Awaited<ReturnType<typeof review>>;
    try {
      const answer = review(a.token).then((r) => r);
      // The handler's read of the queue is waiting on the lock: it began beside the limiter.
      await cards.blocked();
      await cards.release();
      refused = await answer;
    } finally {
      await cards.release();
    }
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate limited' });
    // The refusal is answered only once the work begun beside it has stopped: nothing can follow.
    expect((await cardsRepository(env.deps.db).find(a.accountId, due.id))!.status).toBe('snoozed');
  });

  it('spares the database a GET it refuses: no handler work begins once the bucket is empty', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const review = () => env.api().get('/api/v1/review').set(auth(token));
    expect((await review()).status).toBe(200);
    expect((await review()).status).toBe(200);
    expect((await review()).status).toBe(200);
    // GET /review wakes a snoozed card whose time has come: a visible trace of the handler running.
    const due = await buildCard(env.deps.db, accountId, 'question', { status: 'snoozed', snoozedUntil: Date.now() - 1 });
    expect((await review()).status).toBe(429);
    expect((await review()).status).toBe(429);
    // No work of a request outlives its answer, so the card's state is final here.
    expect((await cardsRepository(env.deps.db).find(accountId, due.id))!.status).toBe('snoozed');
  });

  it('reports RateLimit-Limit, -Remaining and -Reset on every authenticated response', async ({ env }) => {
    const { token } = await env.tenant();
    const first = await me(env, token);
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    const second = await me(env, token);
    expect(second.headers['ratelimit-remaining']).toBe('1');
  });

  it('counts writes in their own bucket, apart from reads', async ({ env }) => {
    const { token } = await env.tenant();
    const write = () => env.api().post('/api/v1/_test/write').set(auth(token)).send({ note: 'x' });
    expect((await write()).status).toBe(200);
    expect((await write()).status).toBe(200);
    expect((await write()).status).toBe(429);
    expect((await me(env, token)).status).toBe(200);
  });

  it('trips the account bucket across two tokens of one account', async ({ env }) => {
    const a = await env.tenant();
    const b = await env.api(); // keep supertest warm
    void b;
    const { mintToken } = await import('../../src/tokens/tokens.service.js');
    const second = await mintToken(env.deps.db, env.config.tokenPrefix, { accountId: a.accountId, label: 'second', scopes: [] });
    // Account burst is 5: 3 reads on the first token, then the second token gets 2 and is refused on its 3rd.
    for (let i = 0; i < 3; i++) expect((await me(env, a.token)).status).toBe(200);
    expect((await me(env, second.token)).status).toBe(200);
    expect((await me(env, second.token)).status).toBe(200);
    const refused = await me(env, second.token);
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-limit']).toBe('5');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
  });

  it("keeps each bucket as one string that expires once it would be full again, apart from an earlier release's hashes", async ({
    env,
  }) => {
    const a = await env.tenant();
    const redis = env.deps.redis;
    const ks = keyspace(env.config.queuePrefix);
    // A bucket an earlier release kept (a hash under the name without ":s") during a rolling deploy.
    const earlier = `${ks}:rl:{${a.accountId}}:${a.tokenId}:reads`;
    await redis.hset(earlier, 'tokens', '0', 'ts', String(Date.now()));
    expect((await me(env, a.token)).status).toBe(200);
    const own = bucketKey(ks, a.accountId, `${a.tokenId}:reads`);
    const account = bucketKey(ks, a.accountId, 'account');
    // Burst 3 at one a second: 2 left; full again in 1 s, kept 1 s past that. The account: burst 5.
    const [left, at] = (await redis.get(own))!.split(' ');
    expect(Number(left)).toBeCloseTo(2, 2);
    expect(Math.abs(Number(at) - Date.now())).toBeLessThan(5_000);
    expect(await redis.pttl(own)).toBeGreaterThan(3_000);
    expect(await redis.pttl(own)).toBeLessThanOrEqual(4_000);
    expect(Number((await redis.get(account))!.split(' ')[0])).toBeCloseTo(4, 2);
    expect(await redis.pttl(account)).toBeLessThanOrEqual(6_000);
    expect(await redis.hgetall(earlier)).toMatchObject({ tokens: '0' });
    await redis.del(earlier);
  });

  it('decides requests that arrive together in one call, each as if alone and in arrival order', async ({ env }) => {
    // Two tokens of one account and a second account, all in one turn of the event loop: one script
    // call per account, and the same answers as one call each (token burst 3, account burst 5).
    const a = await env.tenant();
    const other = await env.tenant();
    const { mintToken } = await import('../../src/tokens/tokens.service.js');
    const second = await mintToken(env.deps.db, env.config.tokenPrefix, { accountId: a.accountId, label: 'second', scopes: [] });
    const consume = (accountId: string, tokenId: string) => env.deps.limiter.consume(accountId, tokenId, 'reads');
    const calls = [
      ...Array.from({ length: 4 }, () => consume(a.accountId, a.tokenId)),
      ...Array.from({ length: 4 }, () => consume(a.accountId, second.tokenId)),
      ...Array.from({ length: 4 }, () => consume(other.accountId, other.tokenId)),
    ];
    const decided = await Promise.all(calls);
    const allowed = decided.map((d) => d.allowed);
    expect(allowed).toEqual([true, true, true, false, true, true, false, false, true, true, true, false]);
    expect(decided.slice(0, 3).map((d) => d.remaining)).toEqual([2, 1, 0]);
    // The second token's third call is refused by the account's bucket, whose header it then reports.
    expect(decided[6]).toMatchObject({ allowed: false, bucket: 'account', limit: 5, remaining: 0 });
    expect(new Set(decided.slice(0, 8).map((d) => d.guard.epoch)).size).toBe(1);
    expect(decided.every((d) => !d.guard.revoked)).toBe(true);
    // Over the HTTP path too: the account bucket is spent, so a read on either token is refused.
    expect((await me(env, a.token)).status).toBe(429);
  });

  it('with Redis unreachable, answers a write 503 temporarily unavailable and still serves a read', async ({ env }) => {
    const { token } = await env.tenant();
    const config = configWith({
      DATABASE_URL: env.config.databaseUrl,
      ...redisAway(),
      QUEUE_PREFIX: env.config.queuePrefix,
    });
    const deps = createDeps(config, createLogger('silent'));
    try {
      const app = createApp(deps, [...routes, ...fixtureRoutes]);
      const read = await request(app).get('/api/v1/me').set(auth(token));
      expect(read.status).toBe(200);
      const write = await request(app).post('/api/v1/_test/write').set(auth(token)).send({ note: 'x' });
      expect(write.status).toBe(503);
      expect(write.body).toEqual({ error: 'temporarily unavailable' });
      expect(Number(write.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(write.headers['cache-control']).toBe('no-store');
    } finally {
      await deps.close();
    }
  });
});
