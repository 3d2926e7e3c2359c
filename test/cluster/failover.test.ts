import { describe, expect } from 'vitest';
import { envFor } from '../helpers/env.js';
import { it as base } from '../helpers/fixture.js';
import { freePort, waitFor } from '../helpers/processes.js';
import { QUICK_STALLS, waitQueuesIdle } from '../helpers/queues-idle.js';
import { startTestCluster } from '../helpers/redis-cluster.js';
import { startService } from '../helpers/service-process.js';
import { makeHook } from '../webhooks/helpers.js';
import { rows } from '../helpers/rows.js';

// One master of the Redis Cluster killed with SIGKILL while webhooks pour in. Its replica is
// promoted (cluster-node-timeout 1 s), the service carries on without a restart, and every webhook it
// answered 2xx for is handed to the agent, whose turn for it finishes once.

/** This file's own cluster: a node of the run's shared one is never killed under other files. */
const it = base.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await startTestCluster({ nodeTimeoutMs: 1_000 });
  onCleanup(() => cluster.stop());
  return cluster;
});
it.override('options', ({ cluster }) => ({ env: { REDIS_CLUSTER_NODES: cluster.nodes } }));

const SENDERS = 8;
/** Webhooks accepted before the kill, and again once the replica has taken over. */
const BEFORE = 60;
const AFTER = 60;

describe('a Redis Cluster master killed with SIGKILL under webhook load', { timeout: 180_000 }, () => {
  it('fails over to the replica; the service recovers without a restart, and each accepted webhook makes one finished turn', async ({
    env,
    cluster,
  }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const port = await freePort();
    const service = startService(['all'], {
      ...envFor(env.config),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      WEBHOOK_HOOK_PER_HOUR: '100000',
      WEBHOOK_ACCOUNT_PER_HOUR: '100000',
      // The sweep queues again an accepted delivery whose job the failover lost (replication is asynchronous).
      MAINTENANCE_SWEEP_MS: '1000',
      MAINTENANCE_ORPHAN_AFTER_MS: '3000',
      // A job the failover left `active` with no worker runs again within seconds, before the count.
      ...QUICK_STALLS,
      AGENT_TURN_LOCK_MS: QUICK_STALLS.JOBS_LOCK_MS,
      AGENT_TURN_STALLED_INTERVAL_MS: QUICK_STALLS.JOBS_STALLED_INTERVAL_MS,
    });
    try {
      await service.port(120_000);
      // The BullMQ queues' slot: the master holding every queue of this deployment.
      const slot = Number(await env.deps.redis.cluster('KEYSLOT', env.config.queuePrefix));
      const victim = await cluster.masterOf(slot);

      const accepted = new Set<string>();
      const statuses = new Map<number, number>();
      let killed = false;
      // How many were accepted when the replica was seen promoted (-1: not yet).
      let atPromotion = -1;
      const done = () => atPromotion >= 0 && accepted.size >= atPromotion + AFTER;
      const sender = async (n: number) => {
        for (let i = 0; !done(); i++) {
          const res = await fetch(`http://127.0.0.1:${port}${hook.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sender: n, i }),
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const body = (await res.json()) as { deliveryId?: string };
          if (res.status >= 200 && res.status < 300) accepted.add(body.deliveryId!);
          else await new Promise((r) => setTimeout(r, 50));
          if (!killed && accepted.size >= BEFORE) {
            killed = true;
            cluster.kill(victim);
          }
        }
      };
      const watcher = (async () => {
        await waitFor(async () => killed, 'the kill', 120_000);
        await waitFor(async () => (await cluster.masterOf(slot)) !== victim, 'the replica to be promoted', 30_000);
        atPromotion = accepted.size;
      })();
      await Promise.all([...Array.from({ length: SENDERS }, (_, n) => sender(n)), watcher]);

      // Refusals while the slot had no master are "try again" answers (502/503), never a 500.
      expect([...statuses.keys()].filter((s) => s !== 202 && s !== 502 && s !== 503)).toEqual([]);
      expect(accepted.size).toBeGreaterThanOrEqual(BEFORE + AFTER);
      // Every webhook answered 202 reaches the agent: its job ran, or the sweep queued it again.
      await waitFor(
        async () => {
          const handed = await rows(env, 'webhook_deliveries')
            .whereIn('id', [...accepted])
            .whereNotNull('turn_id');
          return handed.length === accepted.size;
        },
        'every accepted webhook to be handed to the agent',
        60_000,
      );
      // ... and each one's turn finished, once: counted when no job is left, two sweep intervals later
      // (MAINTENANCE_SWEEP_MS), and still none. After a failover the sweep runs' events are not always seen
      // on the stream the helper reads (once, in a loaded full run, none for 120 s), so the intervals are
      // waited out by time here rather than counted from events.
      const QUEUES_HERE = ['webhook-events', 'agent-turns', 'maintenance'] as const;
      await waitQueuesIdle(env, [...QUEUES_HERE], { sweeps: [] });
      await new Promise((r) => setTimeout(r, 2 * 1000));
      await waitQueuesIdle(env, [...QUEUES_HERE], { sweeps: [] });
      const handed = await rows(env, 'webhook_deliveries').whereIn('id', [...accepted]);
      expect(handed).toHaveLength(accepted.size);
      expect(handed.filter((r) => r.outcome !== 'Accepted' || !r.turn_id)).toEqual([]);
      expect(new Set(handed.map((r) => r.turn_id)).size).toBe(accepted.size);
      // One event turn per accepted webhook and no other: a refused one (502/503) was never handed on too.
      const turns = await rows(env, 'agent_turns', { account_id: accountId, kind: 'event' });
      expect(turns.map((t) => t.id).sort()).toEqual(handed.map((r) => r.turn_id).sort());
      expect(turns.filter((t) => t.status !== 'replied').map((t) => [t.id, t.status, t.failure])).toEqual([]);
      // The same process all along: it never exited, so nothing restarted it.
      expect(service.child.exitCode).toBeNull();
      expect(service.child.signalCode).toBeNull();
    } finally {
      service.child.kill('SIGKILL');
      await service.exited;
    }
  });
});
