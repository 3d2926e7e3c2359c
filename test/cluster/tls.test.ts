import { describe, expect } from 'vitest';
import { envFor } from '../helpers/env.js';
import { it as base } from '../helpers/fixture.js';
import { freePort } from '../helpers/processes.js';
import { startTestCluster } from '../helpers/redis-cluster.js';
import { startService } from '../helpers/service-process.js';
import { makeHook } from '../webhooks/helpers.js';
import { auth } from '../helpers/auth.js';

// A Redis Cluster whose nodes speak only TLS (to clients, on the cluster bus and to their replicas):
// REDIS_CLUSTER_NODES written rediss://host:port, the nodes' CA given to Node the standard way
// (NODE_EXTRA_CA_CERTS). The service runs as its own process on it; this test process stays on the
// suite's Redis for its fixtures (tokens and hooks are in Postgres, shared with the service).

const it = base.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await startTestCluster({ tls: true });
  onCleanup(() => cluster.stop());
  return cluster;
});

describe('a Redis Cluster reached over TLS', { timeout: 120_000 }, () => {
  it('serves reads through the limiter and accepts webhooks onto the queues, with the CA trusted', async ({ env, cluster }) => {
    const { accountId, token } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const port = await freePort();
    const service = startService(['api'], {
      ...envFor(env.config),
      REDIS_CLUSTER_NODES: cluster.nodes,
      NODE_EXTRA_CA_CERTS: cluster.caFile!,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    try {
      await service.port(60_000);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      for (let i = 0; i < 2; i++) {
        const me = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: auth(token) });
        expect(me.status).toBe(200);
      }
      const posted = await fetch(`http://127.0.0.1:${port}${hook.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: 1 }),
      });
      expect(posted.status).toBe(202);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });

  it('refuses to start without trusting the nodes’ certificate, naming REDIS_CLUSTER_NODES', async ({ env, cluster }) => {
    const service = startService(['api'], { ...envFor(env.config), REDIS_CLUSTER_NODES: cluster.nodes, PORT: '0', HOST: '127.0.0.1' });
    const finished = await service.exited;
    expect(finished.code).toBe(1);
    expect(finished.stderr).toMatch(/^Redis Cluster is not ready at rediss:\/\/127\.0\.0\.1:\d+,.* \(SELF_SIGNED_CERT_IN_CHAIN\): /m);
    expect(finished.stderr).toMatch(/NODE_EXTRA_CA_CERTS=ca\.pem; or fix REDIS_CLUSTER_NODES\.$/m);
  });
});
