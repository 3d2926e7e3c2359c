import { afterAll, afterEach, describe, expect } from 'vitest';
import { createHookLimiter } from '../../src/webhooks/hook-limiter.js';
import { webhookClock } from '../../src/webhooks/intake.service.js';
import { liveHooks } from '../../src/webhooks/live-hooks.js';
import { runAdmin } from '../../src/admin/commands.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { deliveryRows, expectError, makeHook, postJson } from './helpers.js';

const HOUR = 3_600_000;
let now = Date.UTC(2026, 10, 22, 8, 0, 0);
it.beforeAll(() => {
  webhookClock.now = () => now;
});
afterEach(() => {
  now += 10 * HOUR;
});
afterAll(() => {
  webhookClock.now = () => Date.now();
});

async function postMany(env: TestEnv, path: string, n: number, stepMs = 0): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    statuses.push((await postJson(env, path, { i })).status);
    now += stepMs;
  }
  return statuses;
}

describe('rolling-hour limits (spec 8.2)', () => {
  it('accepts 60 per hook in any rolling hour, then 429 with Retry-After until the oldest counted one leaves', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const start = now;
    // 60 deliveries, one a minute: the first at start, the last at start + 59 min.
    expect(await postMany(env, hook.path, 60, 60_000)).toEqual(Array(60).fill(202));
    now = start + 59 * 60_000 + 30_000;
    const refused = await postJson(env, hook.path, { over: true });
    expectError(refused, 429, 'rate limited');
    // The oldest counted delivery (at `start`) leaves the window at start + 1 h: 30 s from now.
    expect(refused.headers['retry-after']).toBe('30');
    // Refused deliveries do not count: retrying at once changes nothing, and spends nothing.
    now += 10_000;
    expect((await postJson(env, hook.path, {})).headers['retry-after']).toBe('20');
    // Once the first leaves, exactly one more fits.
    now = start + HOUR;
    expect((await postJson(env, hook.path, { again: 1 })).status).toBe(202);
    const next = await postJson(env, hook.path, { again: 2 });
    expect(next.status).toBe(429);
    // The next oldest (start + 1 min) leaves one minute after the first did.
    expect(next.headers['retry-after']).toBe('60');
  });

  it('accepts 120 per account across its hooks, then 429 on every hook of the account', async ({ env }) => {
    const { accountId } = await env.tenant();
    const a = await makeHook(env, accountId, 'a');
    const b = await makeHook(env, accountId, 'b');
    const c = await makeHook(env, accountId, 'c');
    const start = now;
    expect(await postMany(env, a.path, 60, 1_000)).toEqual(Array(60).fill(202));
    expect(await postMany(env, b.path, 60, 1_000)).toEqual(Array(60).fill(202));
    now = start + 30 * 60_000;
    const refused = await postJson(env, c.path, {});
    expectError(refused, 429, 'rate limited');
    expect(refused.headers['retry-after']).toBe(String(30 * 60));
    // Another account is not affected.
    const other = await env.tenant();
    const d = await makeHook(env, other.accountId, 'd');
    expect((await postJson(env, d.path, {})).status).toBe(202);
    // An hour after the first, the account has room again, one delivery per departed one.
    now = start + HOUR;
    expect((await postJson(env, c.path, {})).status).toBe(202);
    expect((await postJson(env, c.path, {})).status).toBe(429);
  });

  it('logs each accepted delivery; refused ones of a hook share one row a minute that counts them', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    await liveHooks(env.deps).ready();
    await postMany(env, hook.path, 63);
    const rows = await deliveryRows(env, hook.hookId);
    const count = (o: string) => rows.filter((r) => r.outcome === o).length;
    expect([count('Accepted'), count('Rate Limited'), rows.length]).toEqual([60, 1, 61]);
    // A rate-limited delivery keeps no body (it is never handed on, and cannot grow storage).
    expect(rows.find((r) => r.outcome === 'Rate Limited')).toMatchObject({ body: null, bytes: 8, deliveries: 3 });
  });

  it('keeps a sender hammering a hook past its limit to a few rows: 500 refused POSTs, counts adding up to 500', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'hammered');
    await liveHooks(env.deps).ready();
    const start = now;
    expect(await postMany(env, hook.path, 60)).toEqual(Array(60).fill(202));
    now += 1_000;
    const statuses: number[] = [];
    // 500 refused POSTs, 25 at a time (gathered into shared statements), over two minutes.
    for (let wave = 0; wave < 20; wave++) {
      if (wave === 10) now += 60_000;
      statuses.push(
        ...(await Promise.all(Array.from({ length: 25 }, (_, i) => postJson(env, hook.path, { wave, i })))).map((r) => r.status),
      );
    }
    expect(statuses).toEqual(Array(500).fill(429));
    const refused = (await deliveryRows(env, hook.hookId)).filter((r) => r.outcome === 'Rate Limited');
    expect(refused.map((r) => r.deliveries)).toEqual([250, 250]);
    expect(refused.map((r) => r.minute)).toEqual([start, start + 60_000]);
    // The operator still sees them, and how many, in `hook deliveries` (new fields only).
    const { deliveries } = (await runAdmin(['hook', 'deliveries', '--hook-id', hook.hookId, '--limit', '3'], {
      config: env.config,
      db: env.deps.db,
    })) as {
      deliveries: Record<string, unknown>[];
    };
    expect(deliveries.slice(0, 2)).toEqual([
      {
        deliveryId: expect.stringMatching(/^dlv_/),
        at: start + 61_000,
        outcome: 'Rate Limited',
        bytes: expect.any(Number),
        replayOf: null,
        count: 250,
        lastAt: start + 61_000,
      },
      {
        deliveryId: expect.stringMatching(/^dlv_/),
        at: start + 1_000,
        outcome: 'Rate Limited',
        bytes: expect.any(Number),
        replayOf: null,
        count: 250,
        lastAt: start + 1_000,
      },
    ]);
    expect(deliveries[2]).toMatchObject({ outcome: 'Accepted' });
  });

  it('lets exactly the limit through when many deliveries race for the last places', async ({ env }) => {
    const limiter = createHookLimiter(env.deps.redis, `race${Date.now()}`, { perHook: 60, perAccount: 120 });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => limiter.admit('acct_race', `hook_${i % 2}`, `dlv_${i}`, now)));
    // Two hooks of one account: 60 each would be 120, the account's limit; nothing more gets through.
    expect(answers.filter((a) => a.allowed)).toHaveLength(120);
    expect(await limiter.admit('acct_race', 'hook_2', 'dlv_last', now)).toEqual({ allowed: false, retryAfterSeconds: 3600 });
  });

  it('answers a batch of deliveries exactly as the same deliveries admitted one by one, in order', async ({ env }) => {
    const limits = { perHook: 3, perAccount: 5 };
    const one = createHookLimiter(env.deps.redis, `one${Date.now()}`, limits);
    const many = createHookLimiter(env.deps.redis, `many${Date.now()}`, limits);
    // Two accounts, three hooks, times spread over more than an hour so the window rolls mid-batch.
    const ds = Array.from({ length: 40 }, (_, i) => ({
      accountId: `acct_${i % 2}`,
      hookId: `hook_${i % 3}`,
      deliveryId: `dlv_${i}`,
      at: now + i * 5 * 60_000 - (i % 4) * 1_000,
    }));
    const expected = [];
    for (const d of ds) expected.push(await one.admit(d.accountId, d.hookId, d.deliveryId, d.at));
    const first = await many.admitMany(ds.slice(0, 17));
    const rest = await many.admitMany(ds.slice(17));
    expect([...first, ...rest]).toEqual(expected);
    expect(expected.filter((a) => a.allowed).length).toBeGreaterThan(5);
    expect(expected.filter((a) => !a.allowed).length).toBeGreaterThan(5);
  });

  it('counts a replay like a new delivery, and refuses it over the limit', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const first = await postJson(env, hook.path, { first: true });
    await postMany(env, hook.path, 59);
    const refused = await runAdmin(['hook', 'replay', '--delivery-id', first.body.deliveryId], {
      config: env.config,
      db: env.deps.db,
    }).catch((e: { body(): { message: string } }) => e.body().message);
    expect(refused).toBe('rate limited: the hook or the account is at its hourly limit of accepted deliveries; retry in 3600 seconds');
    const rows = await deliveryRows(env, hook.hookId);
    expect(rows.filter((r) => r.replay_of === first.body.deliveryId).map((r) => r.outcome)).toEqual(['Rate Limited']);
  });
});
