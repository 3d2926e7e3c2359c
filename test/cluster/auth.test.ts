import { describe, expect } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { configWith } from '../helpers/config.js';
import { preflight } from '../../src/preflight.js';
import { createSubscriber } from '../../src/redis.js';
import { it as base } from '../helpers/fixture.js';
import { startTestCluster } from '../helpers/redis-cluster.js';
import { makeHook, postJson } from '../webhooks/helpers.js';
import { auth } from '../helpers/auth.js';

// A Redis Cluster whose nodes require a password (requirepass; replicas use masterauth): every Redis user
// of the service authenticates with REDIS_CLUSTER_PASSWORD, and a wrong or missing one is named at start.

const PASSWORD = 'cluster-secret-7Hq2';

const it = base.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await startTestCluster({ password: PASSWORD });
  onCleanup(() => cluster.stop());
  return cluster;
});
it.override('options', ({ cluster }) => ({ env: { REDIS_CLUSTER_NODES: cluster.nodes, REDIS_CLUSTER_PASSWORD: PASSWORD } }));

describe('a Redis Cluster that requires a password', { timeout: 60_000 }, () => {
  it('serves reads through the limiter and accepts a webhook onto the queues', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    for (let i = 0; i < 2; i++) expect((await env.api().get('/api/v1/me').set(auth(token))).status).toBe(200);
    const hook = await makeHook(env, accountId);
    // 202 only once the delivery's job is in its BullMQ queue.
    expect((await postJson(env, hook.path, { a: 1 })).status).toBe(202);
  });

  it('subscribes (the turn bus connection to one node) and hears a PUBLISH from the cluster client', async ({ env }) => {
    const sub = createSubscriber(env.config, 'auth-test');
    try {
      const heard = new Promise<string>((resolve) => sub.on('message', (_channel, message) => resolve(message)));
      await sub.subscribe('auth-test-channel');
      await env.deps.redis.publish('auth-test-channel', 'hello');
      expect(await heard).toBe('hello');
    } finally {
      sub.disconnect();
    }
  });

  it('passes the start-up check with the password, and names the setting, never the password, without it', async ({ env, cluster }) => {
    expect(await preflight(env.config)).toEqual([]);
    const base = { DATABASE_URL: env.config.databaseUrl, REDIS_CLUSTER_NODES: cluster.nodes };
    for (const overrides of [{ ...base, REDIS_CLUSTER_PASSWORD: 'wrong-password' }, base]) {
      const problems = await preflight(configWith(overrides));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^Redis Cluster is not ready at .+ \(.*(NOAUTH|WRONGPASS|auth).*\): .*REDIS_CLUSTER_NODES\.$/i);
      expect(problems[0]).not.toContain('wrong-password');
      expect(problems[0]).not.toContain(PASSWORD);
    }
  });

  it('refuses a cluster password without cluster nodes, and a user without a password', () => {
    expect(() => configWith({ REDIS_CLUSTER_NODES: '', REDIS_CLUSTER_PASSWORD: 'x' })).toThrow(ConfigError);
    expect(() => configWith({ REDIS_CLUSTER_NODES: '', REDIS_CLUSTER_PASSWORD: 'x' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => configWith({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_CLUSTER_USERNAME: 'svc' })).toThrow(
      /REDIS_CLUSTER_USERNAME needs REDIS_CLUSTER_PASSWORD/,
    );
  });
});
