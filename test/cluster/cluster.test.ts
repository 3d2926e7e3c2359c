import './on-cluster.js';
import { Cluster } from 'ioredis';
import { describe, expect } from 'vitest';
import { configWith } from '../helpers/config.js';
import { preflight } from '../../src/preflight.js';
import { isCluster, type Redis } from '../../src/redis.js';
import { mintToken, revokeToken } from '../../src/tokens/tokens.service.js';
import { liveHooks } from '../../src/webhooks/live-hooks.js';
import { buildCard } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { makeHook, postJson } from '../webhooks/helpers.js';
import { auth } from '../helpers/auth.js';
import { row } from '../helpers/rows.js';

// What holds only on a Redis Cluster: keys a script touches together share a slot, the start-up check
// knows the cluster, and a lost node makes intake distrust the live-hooks registry until it is rebuilt.

/** Every key matching `pattern` on every master, with its slot. */
async function keysWithSlots(redis: Redis, pattern: string): Promise<{ key: string; slot: number }[]> {
  const out: { key: string; slot: number }[] = [];
  for (const node of isCluster(redis) ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
      cursor = next;
      for (const key of keys) out.push({ key, slot: Number(await node.cluster('KEYSLOT', key)) });
    } while (cursor !== '0');
  }
  return out;
}

describe('on a Redis Cluster', () => {
  it('keeps every key of one account in one slot, and every queue key in the queue prefix slot', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    // The API limiter's buckets and auth-guard epoch, a revocation mark, the hook limiter's windows, and the
    // review queue's version (a card write bumps it around its commit; the limiter script reads it), and the
    // live stream's backlog of card events (the card write appends to it).
    await buildCard(env.deps.db, accountId, 'approval');
    expect((await env.api().get('/api/v1/me').set(auth(token))).status).toBe(200);
    const other = await mintToken(env.deps.db, env.config.tokenPrefix, { accountId, label: 'other', scopes: [] });
    await revokeToken(env.deps, other.tokenId);
    const hook = await makeHook(env, accountId);
    expect((await postJson(env, hook.path, { a: 1 })).status).toBe(202);

    const accountKeys = await keysWithSlots(env.deps.redis, `*${accountId}*`);
    expect(accountKeys.map((k) => k.key.split(':')[1]).sort()).toEqual(['auth', 'auth', 'live', 'rl', 'rl', 'rv', 'whk', 'whk']);
    expect(new Set(accountKeys.map((k) => k.slot)).size).toBe(1);

    const queueKeys = await keysWithSlots(env.deps.redis, `${env.config.queuePrefix}:*`);
    expect(queueKeys.some((k) => k.key.startsWith(`${env.config.queuePrefix}:webhook-events:`))).toBe(true);
    expect(new Set(queueKeys.map((k) => k.slot))).toEqual(
      new Set([Number(await env.deps.redis.cluster('KEYSLOT', env.config.queuePrefix))]),
    );
  });

  it('passes the start-up check on the cluster, and names REDIS_CLUSTER_NODES when its nodes do not answer', async ({ env }) => {
    expect(await preflight(env.config)).toEqual([]);
    const problems = await preflight(configWith({ DATABASE_URL: env.config.databaseUrl, REDIS_CLUSTER_NODES: '127.0.0.1:1,127.0.0.1:2' }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^Redis Cluster is not ready at 127\.0\.0\.1:1,127\.0\.0\.1:2 \(.+\): .*REDIS_CLUSTER_NODES\.$/);
  });

  it('distrusts the live-hooks registry after losing a node until it has refilled it from Postgres', async ({ env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const tokenHash = (await row(env, 'webhook_hooks', { id: hook.hookId })).token_hash as string;
    // Its own cluster client, so the connection dropped below is no one else's.
    const redis = new Cluster(env.config.redisClusterNodes!.map((n) => ({ ...n })));
    redis.on('error', () => {});
    try {
      const registry = liveHooks({ config: env.config, db: env.deps.db, redis });
      await registry.ready();
      expect(await registry.lookup([tokenHash])).toEqual([{ accountId, hookId: hook.hookId }]);
      // A node's connection ends as when its server dies: the client drops the node ('-node').
      const node = redis.nodes('master')[0]!;
      const lost = new Promise((r) => redis.once('-node', r));
      node.disconnect();
      await lost;
      expect(await registry.lookup([tokenHash])).toBe('untrusted');
      await waitFor(async () => Array.isArray(await registry.lookup([tokenHash])), 'the registry rebuilt', 10_000);
      expect(await registry.lookup([tokenHash])).toEqual([{ accountId, hookId: hook.hookId }]);
    } finally {
      redis.disconnect();
    }
  });
});
