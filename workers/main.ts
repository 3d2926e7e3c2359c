import type { Worker } from 'bullmq';
import { type CATALOG, FORMER_QUEUES, JOBS, QUEUES, type QueueName } from '../src/jobs/catalog.js';
import { createRedis } from '../src/redis.js';
import type { Config } from '../src/config.js';
import type { Deps } from '../src/deps.js';
import { agentTurnsPool } from './agent-turns.js';
import { cardTimersPool } from './card-timers.js';
import { createWorker, returnRunningJobs } from './create-worker.js';
import { inboundMailPool } from './inbound-mail.js';
import { shipmentsPool } from './shipments.js';
import { maintenancePool } from './maintenance.js';
import type { Pool } from './pool.js';
import { providerPollsPool } from './provider-polls.js';
import { webhookEventsPool } from './webhook-events.js';
import { workflowRunsPool } from './workflow-runs.js';

/** One pool module per queue of the catalog (workers/<queue>.ts): a queue without its pool does not compile. */
export const POOLS: { [N in QueueName]: Pool<Extract<(typeof CATALOG)[number], { name: N }>> } = {
  'agent-turns': agentTurnsPool,
  shipments: shipmentsPool,
  'card-timers': cardTimersPool,
  'webhook-events': webhookEventsPool,
  'workflow-runs': workflowRunsPool,
  maintenance: maintenancePool,
  'inbound-mail': inboundMailPool,
  'provider-polls': providerPollsPool,
};

export interface Pools {
  started: QueueName[];
  idle: QueueName[];
  /**
   * Stops taking jobs and waits for the ones in flight, up to SHUTDOWN_GRACE_MS; jobs still running
   * then are returned to their queues. Resolves with the ids returned (empty after a clean close).
   */
  close(): Promise<string[]>;
}

/**
 * Reads `--pools a,b` (default: every pool); an unknown pool name is refused. A renamed queue's former
 * name still names its pool for one release (FORMER_QUEUES), so a deployment's `--pools` keeps working.
 */
export function parsePools(list: string | undefined): QueueName[] {
  if (!list) return [...QUEUES];
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((n) => FORMER_QUEUES.get(n) ?? n);
  const unknown = names.filter((n) => !(QUEUES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`unknown pool ${unknown.join(', ')}; pools are ${QUEUES.join(', ')}`);
  return [...new Set(names)] as QueueName[];
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

/**
 * Keeps the pools' repeating jobs registered. BullMQ keeps a job scheduler only in Redis: after a flush
 * or a restart of a Redis without persistence every sweep would stay off until a process started again.
 * So they are checked (and registered again when gone) every WORKER_SCHEDULES_CHECK_MS and after each
 * reconnect of the producer connection, which registers them. `check()` throws at start; later failures
 * are logged and the next check tries again.
 */
function keepSchedules(deps: Deps, pools: QueueName[]): { check(): Promise<void>; stop(): void } {
  let running: Promise<void> | null = null;
  const check = () =>
    (running ??= (async () => {
      for (const name of pools) await POOLS[name].onStart(deps);
    })().finally(() => {
      running = null;
    }));
  const later = () =>
    void check().catch((err: Error) => deps.logger.warn({ err: err.message }, 'repeating jobs not checked; the next check tries again'));
  const timer = setInterval(later, deps.config.workers.schedulesCheckMs);
  timer.unref();
  deps.redis.on('ready', later);
  return {
    check,
    stop() {
      clearInterval(timer);
      deps.redis.off('ready', later);
    },
  };
}

/** Starts one worker per named pool that has jobs in the catalog. */
export async function startPools(deps: Deps, names: QueueName[]): Promise<Pools> {
  checkPoolConfig(deps.config, names);
  const connection = createRedis(deps.config, 'worker');
  const workers: Worker[] = [];
  const started: QueueName[] = [];
  const idle: QueueName[] = [];
  for (const name of names) {
    const pool: Pool = POOLS[name];
    if (!pool.processors.length) {
      idle.push(name);
      continue;
    }
    workers.push(createWorker(name, pool.processors, JOBS, { deps, connection, options: pool.options(deps) }));
    // A renamed queue's pool drains its former name too, for one release (QueueDef.formerly).
    const from = pool.queue.formerly;
    if (from) workers.push(createWorker(name, pool.processors, JOBS, { deps, connection, options: pool.options(deps), from }));
    started.push(name);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const schedules = keepSchedules(deps, started);
  await schedules.check();
  deps.logger.info({ started, idle }, 'worker pools running');
  deps.logger.flush();
  return {
    started,
    idle,
    async close() {
      schedules.stop();
      const finished = await settlesWithin(Promise.all(workers.map((w) => w.close())), deps.config.shutdownGraceMs);
      const returned = finished ? [] : (await Promise.all(workers.map((w) => returnRunningJobs(w, deps.logger)))).flat();
      if (returned.length) deps.logger.warn({ returned }, 'shutdown grace over: jobs still running were returned to their queues');
      connection.disconnect();
      return returned;
    },
  };
}
