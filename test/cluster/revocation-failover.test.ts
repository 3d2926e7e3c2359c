import { describe, expect } from 'vitest';
import request from 'supertest';
import { Unavailable } from '../../src/errors.js';
import { keyspace } from '../../src/redis.js';
import { authGuardKeys } from '../../src/tokens/auth-guard.js';
import { tokensRepository } from '../../src/tokens/tokens.repository.js';
import { revokeToken } from '../../src/tokens/tokens.service.js';
import { it as base } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { startTestCluster } from '../helpers/redis-cluster.js';
import { auth } from '../helpers/auth.js';

// A revocation's mark in Redis must survive a failover that comes right after it. Replication
// is asynchronous: a master that died just after taking the mark would be replaced by a replica without
// it, and a process that remembers the token would keep trusting it. So on a cluster a revocation waits
// for a replica to hold the mark (WAIT), and is refused while none can.

/** This file's own cluster: a node of the run's shared one is never killed or stopped under other files. */
const it = base.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await startTestCluster({ nodeTimeoutMs: 1_000 });
  onCleanup(() => cluster.stop());
  return cluster;
});
it.override('options', ({ cluster }) => ({ env: { REDIS_CLUSTER_NODES: cluster.nodes } }));

describe('a revocation on a Redis Cluster whose mark’s master then fails', { timeout: 120_000 }, () => {
  it('is refused while the replica cannot take the mark; once it holds it, survives the master’s SIGKILL', async ({ env, cluster }) => {
    const { accountId, token, tokenId } = await env.tenant(['review:read']);
    const me = () => request(env.app).get('/api/v1/me').set(auth(token));
    // Resolved in Postgres once, then remembered by this process and trusted on the limiter's word.
    expect((await me()).status).toBe(200);
    expect((await me()).status).toBe(200);

    const mark = authGuardKeys(keyspace(env.config.queuePrefix), accountId, tokenId).revoked;
    const slot = Number(await env.deps.redis.cluster('KEYSLOT', mark));
    const master = await cluster.masterOf(slot);
    const onMaster = cluster.node(master);
    const replica = cluster.node(Number(((await onMaster.call('ROLE')) as [string, number, [string, string, string][]])[2][0]![1]));
    const replicaPort = Number(replica.options.port);
    const revoke = () => revokeToken({ db: env.deps.db, redis: env.deps.redis, config: env.config }, tokenId);
    try {
      // The replica stopped and its link cut: the master takes the mark, but no replica can hold it. A
      // revocation that went on now would be lost with the master.
      cluster.pause(replicaPort, true);
      await onMaster.call('CLIENT', 'KILL', 'TYPE', 'replica');
      await expect(revoke()).rejects.toBeInstanceOf(Unavailable);
      expect(await tokensRepository(env.deps.db).isLive(tokenId)).toBe(true);
      expect((await me()).status).toBe(200);

      // The replica back and in sync: the revocation goes through, and the master dies at once.
      cluster.pause(replicaPort, false);
      await waitFor(
        async () => {
          try {
            await revoke();
            return true;
          } catch (err) {
            if (err instanceof Unavailable) return false;
            throw err;
          }
        },
        'the revocation to go through',
        30_000,
      );
      cluster.kill(master);
      await waitFor(async () => (await cluster.masterOf(slot)) === replicaPort, 'the replica to take over', 30_000);
      expect(await replica.exists(mark)).toBe(1);
    } finally {
      cluster.pause(replicaPort, false);
      onMaster.disconnect();
      replica.disconnect();
    }

    // Until the process's cluster client has found the new master it answers "try again" (503); then the
    // remembered token meets its mark and Postgres, which has it revoked.
    let status = 0;
    await waitFor(
      async () => {
        status = (await me()).status;
        return status !== 503;
      },
      'an answer other than 503',
      30_000,
    );
    expect(status).toBe(401);
  });
});
