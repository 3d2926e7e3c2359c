import pg from 'pg';
import { Cluster, Redis } from 'ioredis';
import type { Config } from './config.js';
import { directUrl } from './db.js';
import { clusterNodeOptions, startupNodes } from './redis.js';

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
  const cluster = config.redisClusterNodes?.map((n) => `${n.tls ? 'rediss://' : ''}${n.host}:${n.port}`).join(',');
  // No retries: one attempt, and the socket's own error (or the cluster's last node error) says why.
  const redis = config.redisClusterNodes
    ? new Cluster(startupNodes(config.redisClusterNodes), {
        lazyConnect: true,
        clusterRetryStrategy: () => null,
        redisOptions: { connectTimeout: 3_000, maxRetriesPerRequest: 0, ...clusterNodeOptions(config) },
      })
    : new Redis(config.redisUrl, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let socketError: unknown;
  redis.on('error', (err: Error & { lastNodeError?: unknown }) => (socketError ??= err.lastNodeError ?? err));
  redis.on('node error', (err: unknown) => (socketError ??= err));
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    // ioredis rejects with "Connection is closed"; the socket's own error says why. A cluster client
    // reports only that for a node it could not use (a TLS or AUTH failure): one node asked alone tells.
    const why = reason((cluster && (await firstNodeFailure(config))) || (socketError ?? err));
    problems.push(
      cluster
        ? `Redis Cluster is not ready at ${cluster} (${why}): ` +
            (/CERT|TLS|SSL/.test(why)
              ? "its nodes' certificate is not trusted: give Node their CA with NODE_EXTRA_CA_CERTS=ca.pem"
              : 'start its nodes and check that cluster_state is ok (redis-cli -p PORT cluster info)') +
            '; or fix REDIS_CLUSTER_NODES.'
        : `Redis is not reachable at ${where(config.redisUrl)} (${why}): ${HOW_TO_START.redis}; or set REDIS_URL.`,
    );
  } finally {
    redis.disconnect();
  }
  return problems;
}

/** Why the first cluster node refuses a plain connection with the cluster's options, or null when it does not. */
async function firstNodeFailure(config: Config): Promise<unknown> {
  const [first] = startupNodes(config.redisClusterNodes ?? []);
  if (!first) return null;
  const probe = new Redis({
    ...first,
    ...clusterNodeOptions(config),
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let failure: unknown = null;
  probe.on('error', (err: unknown) => (failure ??= err));
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    failure ??= err;
  } finally {
    probe.disconnect();
  }
  return failure;
}
