import request from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { routes } from '../../api/routes/index.js';
import { runAdmin } from '../../src/admin/commands.js';
import { configWith } from '../helpers/config.js';
import { createLogger } from '../../src/logger.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { liveHooks, registryKey } from '../../src/webhooks/live-hooks.js';
import { Unavailable } from '../../src/errors.js';
import { createHook, enableHook, regenerateHook } from '../../src/webhooks/webhooks.service.js';
import { createRedis } from '../../src/redis.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { redisAway } from '../helpers/outages.js';
import { expectError } from './helpers.js';
import { row, rows } from '../helpers/rows.js';
import { overwrite } from '../helpers/row-setup.js';

/**
 * Intake answers tokens no live hook has from the live-hooks registry in Redis, not Postgres. These
 * tests hold it to what a cache must never do: answer 404 for a URL that works in Postgres.
 */
let second: Deps;
let apps: { name: string; post(path: string): Promise<request.Response> }[];
it.beforeAll(async ({ env }) => {
  // A second API process of the same deployment: same database, same Redis keyspace.
  second = createDeps(env.config, createLogger('silent'));
  await second.ready();
  const other = createApp(second, routes);
  const post = (app: typeof other) => (path: string) => request(app).post(path).set('Content-Type', 'application/json').send('{"a":1}');
  apps = [
    { name: 'first', post: post(env.app) },
    { name: 'second', post: post(other) },
  ];
  await Promise.all([liveHooks(env.deps).ready(), liveHooks(second).ready()]);
});
afterAll(async () => {
  await second.close();
});

const admin = (env: TestEnv, ...argv: string[]) => runAdmin(argv, { config: env.config, db: env.deps.db });
const pathOf = (url: string) => new URL(url).pathname;

async function statuses(path: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const app of apps) out[app.name] = (await app.post(path)).status;
  return out;
}

describe('the live-hooks registry behind intake', () => {
  it('makes a created, enabled or regenerated hook work at once in every API process, and a disabled or deleted one stop', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    // The admin CLI is its own process with its own Redis connection; no API process hears from it.
    const { hookId, url } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'shared')) as {
      hookId: string;
      url: string;
    };
    expect(await statuses(pathOf(url))).toEqual({ first: 202, second: 202 });

    await admin(env, 'hook', 'disable', '--hook-id', hookId);
    // Both processes have now seen the token refused…
    expect(await statuses(pathOf(url))).toEqual({ first: 404, second: 404 });
    await admin(env, 'hook', 'enable', '--hook-id', hookId);
    // …and neither remembers it: the re-enabled URL works at once.
    expect(await statuses(pathOf(url))).toEqual({ first: 202, second: 202 });

    const { url: fresh } = (await admin(env, 'hook', 'regenerate', '--hook-id', hookId)) as { url: string };
    expect(await statuses(pathOf(fresh))).toEqual({ first: 202, second: 202 });
    expect(await statuses(pathOf(url))).toEqual({ first: 404, second: 404 });

    await admin(env, 'hook', 'delete', '--hook-id', hookId);
    expect(await statuses(pathOf(fresh))).toEqual({ first: 404, second: 404 });
  });

  it('still serves live hooks when Redis loses the registry, and fills it again from Postgres', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { url } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'kept')) as { url: string };
    // As after an eviction or a flush: the whole registry is gone.
    await env.deps.redis.del(registryKey(env.config));
    expect(await statuses(pathOf(url))).toEqual({ first: 202, second: 202 });
    await Promise.all([liveHooks(env.deps).ready(), liveHooks(second).ready()]);
    expect(await statuses(pathOf(url))).toEqual({ first: 202, second: 202 });
    expectError(await apps[1]!.post(`/api/webhook/hook/whk_${'Q'.repeat(40)}`), 404, 'not found');
  });

  it('counts a token Redis still lists for a hook Postgres has disabled as the same 404, not a delivery', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { hookId, url } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'stale')) as {
      hookId: string;
      url: string;
    };
    const tokenHash = (await row(env, 'webhook_hooks', { id: hookId })).token_hash as string;
    // A disable whose Redis removal failed leaves the token listed; Postgres still has the last word.
    await overwrite(env, 'webhook_hooks', { id: hookId }, { status: 'disabled' });
    expect(await env.deps.redis.hexists(registryKey(env.config), tokenHash)).toBe(1);
    expectError(await apps[0]!.post(pathOf(url)), 404, 'not found');
    expect(await rows(env, 'webhook_deliveries', { hook_id: hookId })).toEqual([]);
  });

  it('trusts the registry again only after refilling it from Postgres when Redis comes back (it may be an older snapshot)', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    const { hookId, url } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'snapshot')) as {
      hookId: string;
      url: string;
    };
    const tokenHash = (await row(env, 'webhook_hooks', { id: hookId })).token_hash as string;
    // A Redis restored from a snapshot taken before the hook was created: the sentinel is there, the token is not.
    await env.deps.redis.hdel(registryKey(env.config), tokenHash);
    const reconnected = new Promise((r) => env.deps.redis.once('ready', r));
    env.deps.redis.disconnect(true);
    await reconnected;
    expect((await apps[0]!.post(pathOf(url))).status).toBe(202);
    await liveHooks(env.deps).ready();
    expect(await env.deps.redis.hexists(registryKey(env.config), tokenHash)).toBe(1);
    expect(await statuses(pathOf(url))).toEqual({ first: 202, second: 202 });
  });

  it('refuses to create, enable or regenerate a hook while Redis is unreachable, and changes nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { hookId } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'before')) as { hookId: string };
    await admin(env, 'hook', 'disable', '--hook-id', hookId);
    // Nothing listens on port 1: a real client that cannot reach its server.
    const away = createRedis(configWith(redisAway()), 'producer');
    try {
      const deps = { config: env.config, db: env.deps.db, redis: away };
      await expect(createHook(deps, env.config.baseUrl, { accountId, label: 'during' })).rejects.toBeInstanceOf(Unavailable);
      await expect(enableHook(deps, hookId)).rejects.toBeInstanceOf(Unavailable);
      await admin(env, 'hook', 'enable', '--hook-id', hookId);
      const { token_hash: tokenHash } = await row(env, 'webhook_hooks', { id: hookId });
      await expect(regenerateHook(deps, env.config.baseUrl, hookId)).rejects.toBeInstanceOf(Unavailable);
      expect((await row(env, 'webhook_hooks', { id: hookId })).token_hash).toBe(tokenHash);
    } finally {
      away.disconnect();
    }
    expect((await rows(env, 'webhook_hooks', { account_id: accountId })).map((h) => [h.label, h.status])).toEqual([['before', 'active']]);
  });
});
