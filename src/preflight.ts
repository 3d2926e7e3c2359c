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
  const problems: string[] = [];
  // Postgres itself when DATABASE_DIRECT_URL names it: that is where the database is created and migrated.
  const admin = new URL(directUrl(config));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    problems.push(
      `Postgres is not reachable at ${where(admin.toString())} (${reason(err)}): ${HOW_TO_START.postgres}; or set DATABASE_URL.`,
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
    problems.push(
      cluster
        ? `Redis Cluster is not ready at ${cluster} (${why}): ` +
            (/CERT|TLS|SSL/.test(why)
              ? "its nodes' certificate is not trusted: give Node their CA with NODE_EXTRA_CA_CERTS=ca.pem"
              : 'start its nodes and check that cluster_state is ok (redis-cli -p PORT cluster info)') +
            '; or fix REDIS_CLUSTER_NODES.'
        : `Redis is not reachable at ${where(config.redisUrl)} (${why}): ${HOW_TO_START.redis}; or set REDIS_URL.`,
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
