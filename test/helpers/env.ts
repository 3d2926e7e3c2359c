import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { inject } from 'vitest';
import { createApp } from '../../api/app.js';
import type { RouteDef } from '../../api/route-def.js';
import { routes as tableRoutes } from '../../api/routes/index.js';
import { adminErrorMessage, runAdmin } from '../../src/admin/commands.js';
import { createAccount } from '../../src/accounts/accounts.service.js';
import type { Config } from '../../src/config.js';
import { configWith } from './config.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { closeLiveHub } from '../../src/review/live-stream.js';
import { exposeExperimentMail, sendWindowHold } from '../../src/experiments/variants/send-window.js';
import { experimentAdapter } from '../../src/experiments/experiment.adapter.js';
import { registerAdapter } from '../../src/channels/registry.js';
import { turnReading } from '../../src/agent/core/doors.js';
import type { ShipRules } from '../../src/shipping/hold-rule.js';
import { clusterNodesSetting, isCluster } from '../../src/redis.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { SCOPES, type Scope } from '../../src/tokens/tokens.types.js';
import { createTestDatabase } from './db.js';
import { viaPgbouncer } from './pgbouncer.js';

export interface TestEnv {
  config: Config;
  deps: Deps & ShipRules;
  app: Express;
  api: () => ReturnType<typeof request>;
  /** An account with one token holding the given scopes (default: all). */
  tenant(scopes?: Scope[], name?: string): Promise<{ accountId: string; token: string; tokenId: string }>;
  close(): Promise<void>;
}

export interface EnvOptions {
  env?: Record<string, string>;
  extraRoutes?: RouteDef[];
  logger?: Logger;
}

/**
 * Removes this file's BullMQ queues and limiter keys so Redis does not fill up across runs. On a
 * cluster each master is scanned, and keys are deleted one by one (a DEL of many must stay in one slot).
 */
export async function clearRedis(deps: Deps, config: Config): Promise<void> {
  const tag = config.queuePrefix.replace(/[{}]/g, '');
  const nodes = isCluster(deps.redis) ? deps.redis.nodes('master') : [deps.redis];
  for (const node of nodes) {
    for (const pattern of [`${config.queuePrefix}:*`, `${tag}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500).catch(() => ['0', [] as string[]] as const);
        cursor = next;
        if (keys.length)
          await keys
            .reduce((p, k) => p.unlink(k), node.pipeline())
            .exec()
            .catch(() => null);
      } while (cursor !== '0');
    }
  }
}

/** Environment variables a child process needs to share this test file's database and prefix. */
export function envFor(config: Config): Record<string, string> {
  return {
    DATABASE_URL: config.databaseUrl,
    DATABASE_POOLER: config.databasePooler,
    ...(config.databaseDirectUrl && { DATABASE_DIRECT_URL: config.databaseDirectUrl }),
    REDIS_URL: config.redisUrl,
    REDIS_COMMAND_TIMEOUT_MS: String(config.redisCommandTimeoutMs),
    ...(config.redisClusterNodes ? { REDIS_CLUSTER_NODES: clusterNodesSetting(config.redisClusterNodes) } : {}),
    ...(config.redisClusterAuth?.username ? { REDIS_CLUSTER_USERNAME: config.redisClusterAuth.username } : {}),
    ...(config.redisClusterAuth ? { REDIS_CLUSTER_PASSWORD: config.redisClusterAuth.password } : {}),
    QUEUE_PREFIX: config.queuePrefix,
    BASE_URL: config.baseUrl,
    LOG_LEVEL: 'silent',
    // Off in children unless a test turns it on: processes of parallel test files would all want 2525.
    INBOUND_SMTP_PORT: '0',
  };
}

/**
 * Where the service reaches a test file's database: directly, or in the `pgbouncer` project (see
 * vitest.config.ts) through the run's PgBouncer in transaction pooling, with DATABASE_POOLER=transaction
 * and Postgres itself as DATABASE_DIRECT_URL (its LISTEN, migrations). A file's `env` may override these.
 */
export function databaseEnv(directUrl: string): Record<string, string> {
  const port = inject('pgbouncerPort');
  if (port === undefined) return { DATABASE_URL: directUrl };
  return { DATABASE_URL: viaPgbouncer(directUrl, port), DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: directUrl };
}

/**
 * One test file's world: its own database cloned from the template, its own Redis key prefix, the
 * real app. `overrides` are environment variables (`RATE_READS_BURST`, …); `logger` captures logs.
 */
export async function setupTestEnv(opts: EnvOptions = {}): Promise<TestEnv> {
  const database = await createTestDatabase();
  const prefix = `{t${randomBytes(4).toString('hex')}}`;
  // Every success reply is checked against its route's response schema (a mismatch is a 500).
  const config = configWith({
    ...databaseEnv(database.url),
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    CHECK_RESPONSES: 'true',
    // A loaded machine (Chromium starting beside other suites) can hold a Redis reply past the 2 s default.
    REDIS_COMMAND_TIMEOUT_MS: '15000',
    ...opts.env,
  });
  // As the API and the worker pools compose theirs: the shipping path is handed the send-window hold rule, and the
  // channel registry the experiments' adapter, and review the agent's door to a card's turn.
  registerAdapter('experiment', experimentAdapter);
  const deps = {
    ...createDeps(config, opts.logger ?? createLogger('silent')),
    holdRule: sendWindowHold,
    onSent: exposeExperimentMail,
    readTurn: turnReading,
  };
  await deps.ready();
  const app = createApp(deps, [...tableRoutes, ...(opts.extraRoutes ?? [])]);
  return {
    config,
    deps,
    app,
    api: () => request(app),
    async tenant(scopes = [...SCOPES], name = 'Acme') {
      const account = await createAccount(deps.db, name);
      const minted = await mintToken(deps.db, config.tokenPrefix, { accountId: account.id, label: 'test', scopes });
      return { accountId: account.id, ...minted };
    },
    async close() {
      await closeLiveHub(deps.redis);
      await clearRedis(deps, config);
      await deps.close();
      await database.drop();
    },
  };
}

/** Runs an admin CLI verb in-process against this file's database: its output, or its refusal message. */
export async function adminCall(env: TestEnv, argv: string[]): Promise<{ out?: Record<string, unknown>; error?: string }> {
  try {
    return { out: await runAdmin(argv, { config: env.config, db: env.deps.db }) };
  } catch (err) {
    return { error: adminErrorMessage(err) };
  }
}
