import pg from 'pg';
import { Cluster, Redis } from 'ioredis';
import type { Config } from './config.js';
import { directUrl } from './db.js';
import { clusterNodeOptions, clusterNodesSetting, startupNodes } from './redis.js';

/** One attempt to reach Redis, within three seconds. */
const ONE_TRY = { connectTimeout: 3_000, maxRetriesPerRequest: 0 };

const HOW_TO_START = {
  postgres:
    'start it (Debian: apt-get install postgresql, then pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main ' +
    'start) or run docker compose up -d postgres redis',
  redis: 'start it (Debian: apt-get install redis-server, then redis-server --daemonize yes) or run docker compose up -d postgres redis',
};

function where(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? 6379 : 5432)}`;
}

function reason(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}

/** Checks that Postgres (the server, not yet our database) and Redis answer; returns one line per problem. */
export async function preflight(config: Config): Promise<string[]> {
  return (await checkStores(config)).map((p) => p.line);
}

/** One problem `preflight` found, and whether it is a store cutting or refusing for a moment (worth waiting for). */
export interface StoreProblem {
  /** The store and where it is, as lines name it ("Postgres at 127.0.0.1:5432"). */
  store: string;
  line: string;
  err: unknown;
  transient: boolean;
}

async function checkStores(config: Config): Promise<StoreProblem[]> {
  const problems: StoreProblem[] = [];
  const problem = (store: string, line: string, err: unknown) => problems.push({ store, line, err, transient: isTransientStoreError(err) });
  // Postgres itself when DATABASE_DIRECT_URL names it: that is where the database is created and migrated.
  const admin = new URL(directUrl(config));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3_000 });
  // A connection cut between queries is an 'error' event as well as a failed query: the query's failure is the answer.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    problem(
      `Postgres at ${where(admin.toString())}`,
      `Postgres is not reachable at ${where(admin.toString())} (${reason(err)}): ${HOW_TO_START.postgres}; or set DATABASE_URL.`,
      err,
    );
  } finally {
    await client.end().catch(() => {});
  }
  const cluster = config.redisClusterNodes && clusterNodesSetting(config.redisClusterNodes);
  // No retries: one attempt, and the socket's own error (or the cluster's last node error) says why.
  const failure = await pingFailure(
    config.redisClusterNodes
      ? new Cluster(startupNodes(config.redisClusterNodes), {
          lazyConnect: true,
          clusterRetryStrategy: () => null,
          redisOptions: { ...ONE_TRY, ...clusterNodeOptions(config) },
        })
      : new Redis(config.redisUrl, { ...ONE_TRY, lazyConnect: true, retryStrategy: () => null }),
  );
  if (failure) {
    // A cluster client reports only "Connection is closed" for a node it could not use (a TLS or AUTH
    // failure): the first node asked alone, with the same options, tells why.
    const [first] = startupNodes(config.redisClusterNodes ?? []);
    const nodeFailure =
      first &&
      (await pingFailure(new Redis({ ...first, ...ONE_TRY, ...clusterNodeOptions(config), lazyConnect: true, retryStrategy: () => null })));
    const why = reason(nodeFailure || failure);
    problem(
      cluster ? `Redis Cluster at ${cluster}` : `Redis at ${where(config.redisUrl)}`,
      cluster
        ? `Redis Cluster is not ready at ${cluster} (${why}): ` +
            (/CERT|TLS|SSL/.test(why)
              ? "its nodes' certificate is not trusted: give Node their CA with NODE_EXTRA_CA_CERTS=ca.pem"
              : 'start its nodes and check that cluster_state is ok (redis-cli -p PORT cluster info)') +
            '; or fix REDIS_CLUSTER_NODES.'
        : `Redis is not reachable at ${where(config.redisUrl)} (${why}): ${HOW_TO_START.redis}; or set REDIS_URL.`,
      nodeFailure || failure,
    );
  }
  return problems;
}

/**
 * Connects `client` once and pings it, then disconnects: null when it answered, else why not (the
 * socket's own error, or a cluster's last node error, rather than ioredis' "Connection is closed").
 */
async function pingFailure(client: Redis | Cluster): Promise<unknown> {
  let socketError: unknown;
  client.on('error', (err: Error & { lastNodeError?: unknown }) => (socketError ??= err.lastNodeError ?? err));
  client.on('node error', (err: unknown) => (socketError ??= err));
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (err) {
    return socketError ?? err;
  } finally {
    client.disconnect();
  }
}

/** Error codes of a store that is there but cut or turned away this connection for a moment. */
const CUT_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08003',
  '08006',
]);
// What pg, knex (which prefixes the statement: "ROLLBACK - Connection terminated") and ioredis say then.
const CUT_MESSAGE = new RegExp(
  [
    'Connection terminated',
    'not queryable',
    'terminating connection',
    'server closed the connection',
    'Connection is closed',
    'timeout exceeded when trying to connect',
    'Timeout acquiring a connection',
    'socket hang up',
    'ECONNRESET',
    'EPIPE',
  ].join('|'),
  'i',
);

/**
 * True for an error a store gives while it cuts connections (a restart, backends terminated, a pooler
 * or proxy dropping them): worth trying again. A refused connection is not: at start-up that is a
 * store that is not running, said at once (HOW_TO_START).
 */
export function isTransientStoreError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && CUT_CODES.has(e.code)) return true;
  return typeof e?.message === 'string' && CUT_MESSAGE.test(e.message);
}

/** Start-up gave up: a store kept cutting its connections until START_DEADLINE_MS ran out. `message` is one line. */
export class StartDeadlineError extends Error {}

export interface StartDeadline {
  at: number;
  ms: number;
  onRetry(step: string, err: unknown, waitMs: number): void;
}

const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;

/**
 * Runs a start-up step that talks to a store, trying again after a transient store error, backing off
 * (a quarter second doubling up to five, with jitter), until the deadline; then throws a
 * StartDeadlineError naming the store, the step and the last error. Other errors are thrown at once.
 */
export async function retryWithin<T>(store: string, step: string, work: () => Promise<T>, deadline: StartDeadline): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isTransientStoreError(err)) throw err;
      const wait = Math.round(Math.min(FIRST_WAIT_MS * 2 ** attempt, LONGEST_WAIT_MS) * (0.8 + Math.random() * 0.4));
      if (Date.now() + wait > deadline.at) {
        throw new StartDeadlineError(deadlineLine(store, step, deadline, err));
      }
      deadline.onRetry(step, err, wait);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

const deadlineLine = (store: string, step: string, deadline: StartDeadline, err: unknown) =>
  `${store} kept cutting connections while ${step} for ${Math.round(deadline.ms / 1000)} s (START_DEADLINE_MS); ` +
  `last: ${String((err as Error)?.message ?? err).replace(/\s+/g, ' ')}`;

/**
 * `preflight`, tried again while every problem it finds is a store cutting connections, until the
 * deadline (then a StartDeadlineError naming the store): the problem lines (none: both answered). A
 * store that refuses or is unknown is reported at once, as before.
 */
export async function waitForStores(config: Config, deadline: StartDeadline): Promise<string[]> {
  let last: StoreProblem[] = [];
  const step = 'checking Postgres and Redis';
  try {
    await retryWithin(
      'a store',
      step,
      async () => {
        last = await checkStores(config);
        if (last.length && last.every((p) => p.transient)) throw last[0]!.err;
      },
      deadline,
    );
  } catch (err) {
    if (!(err instanceof StartDeadlineError)) throw err;
    throw new StartDeadlineError(deadlineLine(last[0]!.store, step, deadline, last[0]!.err));
  }
  return last.map((p) => p.line);
}
