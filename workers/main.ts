import type { Worker } from 'bullmq';
import { JOBS } from '../src/jobs/catalog.js';
import { QUEUES, type QueueName } from '../src/jobs/registry.js';
import { createRedis } from '../src/redis.js';
import type { Config } from '../src/config.js';
import type { Deps } from '../src/deps.js';
import { createWorker, returnRunningJobs } from './create-worker.js';
import { POOL_SETUP } from './pool-setup.js';
import { PROCESSORS } from './processors.js';

export interface Pools {
  started: QueueName[];
  idle: QueueName[];
  /**
   * Stops taking jobs and waits for the ones in flight, up to SHUTDOWN_GRACE_MS; jobs still running
   * then are returned to their queues. Resolves with the ids returned (empty after a clean close).
   */
  close(): Promise<string[]>;
}

/** Reads `--pools a,b` (default: every pool); an unknown pool name is refused. */
export function parsePools(list: string | undefined): QueueName[] {
  if (!list) return [...QUEUES];
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(QUEUES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown pool ${unknown.join(', ')}; pools are ${QUEUES.join(', ')}`);
  return names as QueueName[];
}

/**
 * Refuses settings the named pools cannot run under. A running turn holds one database connection for
 * its whole length (its advisory lock's session) and its tools borrow more from the same pool, so
 * AGENT_TURN_CONCURRENCY turns need more than that many connections, or they wait on each other forever.
 */
export function checkPoolConfig(config: Pick<Config, 'databasePoolMax' | 'agent'>, names: readonly QueueName[]): void {
  const turns = config.agent.turnConcurrency;
  if (names.includes('agent-turns') && turns >= config.databasePoolMax) {
    throw new Error(
      `AGENT_TURN_CONCURRENCY (${turns}) must be below DATABASE_POOL_MAX (${config.databasePoolMax}): each running turn ` +
        `holds a database connection and its tools borrow more`,
    );
  }
}

/** True when `work` settles within `ms`; false when the time ran out first (`work` goes on). */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts one worker per named pool that has jobs in the catalog. */
export async function startPools(rt: Deps, names: QueueName[]): Promise<Pools> {
  checkPoolConfig(rt.config, names);
  const connection = createRedis(rt.config, 'worker');
  const workers: Worker[] = [];
  const started: QueueName[] = [];
  const idle: QueueName[] = [];
  for (const name of names) {
    if (!JOBS.some((j) => j.queue === name)) {
      idle.push(name);
      continue;
    }
    workers.push(createWorker(name, PROCESSORS, JOBS, { rt, connection, options: POOL_SETUP[name]?.options?.(rt) }));
    started.push(name);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  for (const name of started) await POOL_SETUP[name]?.onStart?.(rt);
  rt.logger.info({ started, idle }, 'worker pools running');
  rt.logger.flush();
  return {
    started,
    idle,
    async close() {
      const finished = await settlesWithin(Promise.all(workers.map((w) => w.close())), rt.config.shutdownGraceMs);
      const returned = finished ? [] : (await Promise.all(workers.map((w) => returnRunningJobs(w, rt.logger)))).flat();
      if (returned.length) rt.logger.warn({ returned }, 'shutdown grace over: jobs still running were returned to their queues');
      connection.disconnect();
      return returned;
    },
  };
}
