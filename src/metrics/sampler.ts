import type { Db } from '../db.js';
import type { QueueSet } from '../jobs/registry.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import { metrics } from './registry.js';

export interface SamplerSources {
  db: Db;
  redis: Redis;
  queues: QueueSet;
}

const STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/** Sends whose provider answer is lost: `pending` while reconciled, `unknown` once a person must decide. */
const OLDEST_PENDING = `select min(created_at) as oldest from shipments where status in ('pending', 'unknown')`;

/**
 * One sample: BullMQ's counts of every queue (one round trip each), the age of the oldest lost send
 * answer (one indexed query) and a Redis PING's round trip. A failed part leaves its last values.
 */
export async function sampleOnce(src: SamplerSources, log: Logger): Promise<void> {
  const parts = [
    ...[...src.queues].map(async ([name, queue]) => {
      const counts = await queue.getJobCounts(...STATES);
      for (const state of STATES) metrics.queueJobs.set({ queue: name, state }, counts[state] ?? 0);
    }),
    (async () => {
      const rows = (await src.db.raw(OLDEST_PENDING)) as { rows: { oldest: string | number | null }[] };
      const oldest = rows.rows[0]?.oldest;
      metrics.deliveryPendingOldest.set(oldest == null ? 0 : Math.max(0, (Date.now() - Number(oldest)) / 1000));
    })(),
    (async () => {
      const end = metrics.redisDuration.startTimer({ role: 'producer' });
      await src.redis.ping();
      end();
    })(),
  ];
  const failed = (await Promise.allSettled(parts)).filter((r) => r.status === 'rejected');
  if (failed.length)
    log.warn({ err: (failed[0] as PromiseRejectedResult).reason?.message }, 'metrics sample incomplete; next one tries again');
}

/** Samples at once, then every `everyMs`; a sample still running when the next is due is not doubled. */
export function startSampler(src: SamplerSources, everyMs: number, log: Logger): { stop(): void } {
  let busy = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    void sampleOnce(src, log).finally(() => {
      busy = false;
    });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
