import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { directUrl, listenUrl } from '../../src/db.js';
import type { Redis } from 'ioredis';
import { createRedis } from '../../src/redis.js';

describe('configuration', () => {
  it('serves a local machine with no variables set', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/growth_agent',
      redisUrl: 'redis://127.0.0.1:6379',
      baseUrl: 'http://localhost:3000',
      queuePrefix: '{gas}',
      admin: null,
    });
    expect(c.limits.reads).toEqual({ perMinute: 300, burst: 600 });
  });

  it('names every bad variable and its rule at once', () => {
    try {
      loadConfig({ PORT: 'eighty', REDIS_URL: 'http://x', QUEUE_PREFIX: 'gas', RATE_READS_BURST: '0', LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/^PORT must be a whole number/m);
      expect(problems).toMatch(/^REDIS_URL must be a URL starting with redis:\/\/ or rediss:\/\//m);
      expect(problems).toMatch(/^QUEUE_PREFIX must be a Redis Cluster hash tag such as \{gas\}/m);
      expect(problems).toMatch(/^RATE_READS_BURST must be at least 1/m);
      expect(problems).toMatch(/^LOG_LEVEL /m);
    }
  });

  it('runs on a Redis Cluster when REDIS_CLUSTER_NODES lists host:port pairs, and names the variable when it is malformed', () => {
    expect(loadConfig({}).redisClusterNodes).toBeNull();
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001' }).redisClusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
    ]);
    for (const bad of ['10.0.0.1', '10.0.0.1:7000,', 'redis://10.0.0.1:7000', '10.0.0.1:0', '10.0.0.1:70000']) {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: bad }), bad).toThrow(
        'invalid configuration: REDIS_CLUSTER_NODES must be a comma-separated list of host:port such as 10.0.0.1:7000,10.0.0.2:7000',
      );
    }
    // TLS: every node written rediss://, or none.
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'rediss://10.0.0.1:7000,rediss://10.0.0.2:7000' }).redisClusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000, tls: true },
      { host: '10.0.0.2', port: 7000, tls: true },
    ]);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'rediss://10.0.0.1:7000,10.0.0.2:7000' })).toThrow(
      'invalid configuration: REDIS_CLUSTER_NODES must use rediss:// on every node or on none',
    );
  });

  it('takes BASE_URL without a trailing slash and enables the board only with both admin variables', () => {
    expect(loadConfig({ BASE_URL: 'https://agent.example.com/' }).baseUrl).toBe('https://agent.example.com');
    expect(loadConfig({ ADMIN_USER: 'ops' }).admin).toBeNull();
    expect(loadConfig({ ADMIN_USER: 'ops', ADMIN_PASSWORD: 'pw' }).admin).toEqual({
      user: 'ops',
      password: 'pw',
      readOnly: true,
      maxFailures: 5,
      windowSeconds: 900,
    });
    expect(loadConfig({ ADMIN_USER: 'ops', ADMIN_PASSWORD: 'pw', ADMIN_READ_ONLY: 'false' }).admin?.readOnly).toBe(false);
    expect(() => loadConfig({ ADMIN_READ_ONLY: 'yes' })).toThrow(/ADMIN_READ_ONLY/);
  });

  it('reaches Postgres directly unless DATABASE_POOLER says a transaction pooler is in between', () => {
    const plain = loadConfig({});
    expect([plain.databasePooler, plain.databaseDirectUrl, listenUrl(plain), directUrl(plain)]).toEqual([
      'none',
      null,
      plain.databaseUrl,
      plain.databaseUrl,
    ]);
    const pooled = { DATABASE_URL: 'postgres://app@pgbouncer:6432/gas', DATABASE_POOLER: 'transaction' };
    const bare = loadConfig(pooled);
    // Behind a pooler the posts listener needs Postgres itself; without it there is none.
    expect([listenUrl(bare), directUrl(bare)]).toEqual([null, 'postgres://app@pgbouncer:6432/gas']);
    const direct = loadConfig({ ...pooled, DATABASE_DIRECT_URL: 'postgres://app@db:5432/gas' });
    expect([listenUrl(direct), directUrl(direct)]).toEqual(['postgres://app@db:5432/gas', 'postgres://app@db:5432/gas']);
    expect(() => loadConfig({ DATABASE_POOLER: 'session' })).toThrow(/DATABASE_POOLER/);
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'db:5432' })).toThrow(/DATABASE_DIRECT_URL must be a URL starting with postgres:\/\//);
  });

  it('gives an API-side Redis command 2 s before it fails unless REDIS_COMMAND_TIMEOUT_MS says otherwise', () => {
    const producer = (env: Record<string, string>) => createRedis(loadConfig(env), 'producer', { lazyConnect: true }) as Redis;
    const quiet = producer({});
    const patient = producer({ REDIS_COMMAND_TIMEOUT_MS: '15000' });
    expect([quiet.options.commandTimeout, quiet.options.connectTimeout]).toEqual([2_000, 2_000]);
    expect([patient.options.commandTimeout, patient.options.connectTimeout]).toEqual([15_000, 15_000]);
    // Workers block on Redis and never time a command out.
    const worker = createRedis(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '15000' }), 'worker', { lazyConnect: true }) as Redis;
    expect(worker.options.commandTimeout).toBeUndefined();
    expect(() => loadConfig({ REDIS_COMMAND_TIMEOUT_MS: 'soon' })).toThrow(/REDIS_COMMAND_TIMEOUT_MS must be a whole number/);
    quiet.disconnect();
    patient.disconnect();
    worker.disconnect();
  });

  it("keeps finished jobs 1000 / 24 h and 5000 / 7 d, with BullMQ's 30 s lock and stall check, unless told otherwise", () => {
    const stalled = { lockMs: 30_000, checkEveryMs: 30_000 };
    expect(loadConfig({}).jobs).toEqual({
      keepCompleted: { count: 1000, age: 86_400 },
      keepFailed: { count: 5000, age: 604_800 },
      stalled,
    });
    expect(loadConfig({ JOBS_KEEP_COMPLETED_COUNT: '0', JOBS_KEEP_FAILED_AGE_SECONDS: '60', JOBS_LOCK_MS: '4000' }).jobs).toEqual({
      keepCompleted: { count: 0, age: 86_400 },
      keepFailed: { count: 5000, age: 60 },
      stalled: { ...stalled, lockMs: 4_000 },
    });
  });

  it('runs each maintenance sweep every MAINTENANCE_SWEEP_MS unless its own setting says otherwise', () => {
    const sweeps = loadConfig({}).maintenance.sweeps;
    expect(new Set(Object.values(sweeps))).toEqual(new Set([60_000]));
    expect(Object.keys(sweeps)).toHaveLength(10);
    const old = loadConfig({ MAINTENANCE_SWEEP_MS: '5000' }).maintenance.sweeps;
    expect(new Set(Object.values(old))).toEqual(new Set([5_000]));
    const own = loadConfig({ MAINTENANCE_SWEEP_MS: '5000', MAINTENANCE_RETENTION_SWEEP_MS: '600000' }).maintenance.sweeps;
    expect(own).toMatchObject({ retention: 600_000, rollups: 5_000, turns: 5_000 });
    expect(() => loadConfig({ MAINTENANCE_ROLLUPS_SWEEP_MS: '0' })).toThrow(/MAINTENANCE_ROLLUPS_SWEEP_MS/);
  });

  it('reads the dashboard import and live-stream settings, with their defaults', () => {
    const c = loadConfig({});
    expect(c.leadImports).toEqual({ maxBytes: 32 * 1024 * 1024, previewRows: 20 });
    expect(c.liveUpdates).toEqual({ perSession: 5, perAccount: 200, heartbeatMs: 15_000, backlogEvents: 1_000 });
    expect(loadConfig({ LIVE_STREAMS_PER_SESSION: '2', LEAD_IMPORT_MAX_BYTES: '1000' })).toMatchObject({
      liveUpdates: { perSession: 2 },
      leadImports: { maxBytes: 1000 },
    });
    expect(() => loadConfig({ LIVE_HEARTBEAT_MS: '0' })).toThrow(/LIVE_HEARTBEAT_MS/);
  });

  it('runs 8 card timers, 4 mail sends and 1 maintenance job per worker process unless told otherwise', () => {
    const c = loadConfig({});
    expect([c.review.timersConcurrency, c.mail.sendsConcurrency, c.maintenance.concurrency]).toEqual([8, 4, 1]);
    const set = loadConfig({ CARD_TIMERS_CONCURRENCY: '2', MAIL_SENDS_CONCURRENCY: '16', MAINTENANCE_CONCURRENCY: '3' });
    expect([set.review.timersConcurrency, set.mail.sendsConcurrency, set.maintenance.concurrency]).toEqual([2, 16, 3]);
    expect(() => loadConfig({ MAIL_SENDS_CONCURRENCY: '0' })).toThrow(/MAIL_SENDS_CONCURRENCY must be at least 1/);
  });

  it('nests each area’s settings under one key, read from the same environment variables as before', () => {
    const c = loadConfig({
      MAIL_SOFT_FAILURES_BEFORE_BLOCK: '7',
      MAIL_ALLOWED_FROM_DOMAINS: 'a.example',
      MAIL_EHLO_NAME: 'out.example.com',
      SMTP_REQUIRE_TLS: 'true',
      SMTP_HOST: 'relay.example.com',
      INBOUND_AUTH_DNS_TIMEOUT_MS: '900',
      AGENT_MODEL_CALLS_PER_DAY: '42',
      MAINTENANCE_RETENTION_SWEEP_MS: '120000',
    });
    expect(c.mail.failures).toEqual({ softFailuresBeforeBlock: 7 });
    expect(c.mail.identity).toEqual({ allowedFromDomains: ['a.example'] });
    expect(c.mail.smtp).toMatchObject({ host: 'relay.example.com', ehloName: 'out.example.com', requireTls: true, tlsCa: null });
    expect(c.inbound.auth).toMatchObject({ dnsTimeoutMs: 900 });
    expect(c.inbound.tls).toBeNull();
    expect(c.agent.limits).toMatchObject({ modelCallsPerDay: 42 });
    expect(c.maintenance.sweeps).toMatchObject({ retention: 120_000 });
    // No area is split over several top-level keys any more.
    const top = Object.keys(c);
    for (const old of ['mailFailures', 'mailIdentity', 'mailTransport', 'inboundAuth', 'agentLimits', 'maintenanceSweeps', 'nested'])
      expect(top).not.toContain(old);
  });
});
