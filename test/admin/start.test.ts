import { connect } from 'node:net';
import { describe, expect } from 'vitest';

// These tests spawn real processes (tsx start-up, migrations): slow on a loaded 2-core machine.
const SLOW = 120_000;
import { testDatabaseName, urlFor, withAdminClient } from '../helpers/db.js';
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { runTs, waitFor } from '../helpers/processes.js';
import { startService } from '../helpers/service-process.js';
import { configWith } from '../helpers/config.js';
import { checkPoolConfig } from '../../workers/main.js';
import { prepareDatabase } from '../../src/db.js';
import { isTransientStoreError } from '../../src/preflight.js';
import { tcpProxy } from '../helpers/outages.js';
import { auth } from '../helpers/auth.js';

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (d) => (out += d));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

describe('process start-up', { timeout: SLOW }, () => {
  it('creates a missing database, migrates, serves the API with every pool, and stops cleanly on SIGTERM', async ({ env }) => {
    const database = testDatabaseName();
    await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    // PORT=0 and the port read from its own 'api listening' line: a port picked beforehand could be taken
    // by another test's process in between, and its healthz would answer for ours.
    const childEnv = { ...envFor(env.config), DATABASE_URL: urlFor(database), PORT: '0', SHUTDOWN_GRACE_MS: '3000', LOG_LEVEL: 'info' };
    const proc = startService(['all'], childEnv);
    try {
      const port = await proc.port(45_000);
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 'healthz', 45_000);
      const found = await withAdminClient(
        async (c) => (await c.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [database])).rowCount,
      );
      expect(found).toBe(1);
      const created = await runTs(['bin/admin.ts', 'account', 'create', '--name', 'Live'], childEnv);
      const accountId = JSON.parse(created.stdout).account.id as string;
      const minted = await runTs(
        ['bin/admin.ts', 'token', 'mint', '--account', accountId, '--label', 'l', '--scopes', 'review:read'],
        childEnv,
      );
      const { token } = JSON.parse(minted.stdout) as { token: string };
      const me = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: auth(token) });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { me: { account: { id: string } } }).me.account.id).toBe(accountId);
      expect(proc.output()).not.toContain(token);
      // What Node refuses before Express (oversized headers, broken HTTP) is JSON as well.
      const huge = await fetch(`http://127.0.0.1:${port}/api/v1/me?q=${'x'.repeat(20_000)}`);
      expect(huge.status).toBe(431);
      expect(huge.headers.get('cache-control')).toBe('no-store');
      expect(await huge.json()).toEqual({ error: 'request headers are too large' });
      const broken = await rawRequest(port, 'GARBAGE / HTTP/9.9\r\n\r\n');
      expect(broken).toMatch(/^HTTP\/1\.1 400 Bad Request/);
      expect(broken).toContain('{"error":"request is malformed"}');
    } finally {
      proc.child.kill('SIGTERM');
    }
    const done = await proc.exited;
    expect(done.code).toBe(0);
    expect(proc.output()).toContain('"msg":"stopped"');
    await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
  });

  // The four refusals below run at once (it.concurrent): each is a process that stops before it starts
  // anything, and they share nothing.
  it.concurrent('stops with one clear line naming Redis when Redis cannot be reached', async ({ env, expect }) => {
    const out = await runTs(['bin/start.ts', 'all'], { ...envFor(env.config), REDIS_URL: 'redis://127.0.0.1:1' });
    expect(out.code).toBe(1);
    const lines = out.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Redis is not reachable at 127\.0\.0\.1:1 \(ECONNREFUSED\): start it .*docker compose up -d postgres redis/);
  });

  it.concurrent('stops with one clear line naming Postgres when Postgres cannot be reached', async ({ env, expect }) => {
    const out = await runTs(['bin/start.ts', 'api'], { ...envFor(env.config), DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' });
    expect(out.code).toBe(1);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/^Postgres is not reachable at 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  });

  it.concurrent('refuses an unknown pool name and a bad variable before connecting to anything', async ({ env, expect }) => {
    const pools = await runTs(['bin/start.ts', 'workers', '--pools', 'nope'], envFor(env.config));
    expect(pools.code).toBe(1);
    expect(pools.stderr).toMatch(/unknown pool nope; pools are agent-turns/);
    const bad = await runTs(['bin/start.ts', 'api'], { ...envFor(env.config), PORT: 'eighty' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/configuration: PORT must be a whole number/);
  });

  it.concurrent('refuses to run agent turns with no database connection to spare for them, before connecting to anything', async ({
    env,
    expect,
  }) => {
    const crowded = {
      ...envFor(env.config),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x',
      AGENT_TURN_CONCURRENCY: '10',
      DATABASE_POOL_MAX: '10',
    };
    const out = await runTs(['bin/start.ts', 'workers', '--pools', 'agent-turns,maintenance'], crowded);
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe(
      'AGENT_TURN_CONCURRENCY (10) must be below DATABASE_POOL_MAX (10): each running turn holds a database connection and ' +
        'its tools borrow more',
    );
    // The API and the other pools hold no connection per turn: the same settings start them.
    expect(() =>
      checkPoolConfig(configWith({ AGENT_TURN_CONCURRENCY: '10', DATABASE_POOL_MAX: '10' }), ['maintenance', 'webhook-events']),
    ).not.toThrow();
  });

  it('prints that the API listens, the dashboard’s address and that the pools run, at once, before anything else happens', async ({
    env,
  }) => {
    // Before any request: a buffered logger held these lines until 4 KB of request logs or exit.
    const proc = startService(['all'], { ...envFor(env.config), PORT: '0', LOG_LEVEL: 'info' });
    try {
      const port = await proc.port(90_000);
      await proc.logged('worker pools running', 90_000);
      expect(proc.child.exitCode).toBeNull();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      // The address a person opens, from BASE_URL, and the page is there.
      const dashboard = `${env.config.baseUrl}/dashboard/`;
      expect(proc.stdout()).toContain(`"dashboard":"${dashboard}","msg":"dashboard at ${dashboard}"`);
      expect((await fetch(`http://127.0.0.1:${port}/dashboard/`)).headers.get('content-type')).toMatch(/^text\/html/);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect((await proc.exited).code).toBe(0);
  });

  it('keeps a line logged just before a kill -9: a job failure, before the worker runs its next job', async ({ env }) => {
    const proc = startService(['workers', '--pools', 'agent-turns'], {
      ...envFor(env.config),
      LOG_LEVEL: 'info',
      AGENT_TURN_CONCURRENCY: '1',
    });
    try {
      // One job slot: the worker logs the first job's failure before it takes the next job.
      await env.deps.queues.get('agent-turns')!.add('agent.turn', { accountId: 42 }, { jobId: 'bad-payload', attempts: 1 });
      const { token } = await env.tenant();
      const sent = await env.api().post('/api/v1/agent/messages').set(auth(token)).send({ text: 'what is waiting' });
      expect(sent.status).toBe(202);
      const requestId = sent.body.requestId as string;
      await waitFor(
        async () => {
          const res = await env.api().get(`/api/v1/agent/messages/${requestId}`).set(auth(token));
          return res.body.message?.status === 'replied';
        },
        'the second job to run',
        60_000,
      );
    } finally {
      proc.child.kill('SIGKILL');
    }
    await proc.exited;
    expect(proc.stdout()).toMatch(/"level":40,[^\n]*"jobId":"bad-payload"[^\n]*"msg":"job failed"/);
  });
});

describe('start-up while Postgres cuts its connections', { timeout: SLOW }, () => {
  /** This file's database, reached through a TCP proxy that can drop every connection. */
  async function proxiedDatabase(env: TestEnv) {
    const target = new URL(env.config.databaseUrl);
    const proxy = await tcpProxy(Number(target.port || 5432));
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    return { proxy, url: url.toString() };
  }

  it('counts the errors pg and knex really throw on a cut connection as worth trying again', async ({ env }) => {
    const { proxy, url } = await proxiedDatabase(env);
    proxy.cut();
    try {
      const config = configWith({ ...envFor(env.config), DATABASE_URL: url });
      const err = await prepareDatabase(config).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).not.toBeNull();
      expect(isTransientStoreError(err)).toBe(true);
      // A store that is simply not there is not waited for: start-up names it at once.
      const refused = await prepareDatabase(configWith({ ...envFor(env.config), DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' })).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isTransientStoreError(refused)).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('starts a worker process once the cuts stop, within START_DEADLINE_MS', async ({ env }) => {
    const { proxy, url } = await proxiedDatabase(env);
    proxy.cut();
    const proc = startService(['workers', '--pools', 'maintenance'], {
      ...envFor(env.config),
      DATABASE_URL: url,
      LOG_LEVEL: 'info',
      START_DEADLINE_MS: '60000',
    });
    try {
      // Cut from the start until the process has met a cut, then cut now and then for two seconds more.
      await proc.logged('start-up: a store cut the connection; trying again', 60_000);
      // The pauses are the cut pattern under test, not a wait for something.
      for (const until = Date.now() + 2_000; Date.now() < until; ) {
        proxy.restore();
        await new Promise((r) => setTimeout(r, 100));
        proxy.cut();
        await new Promise((r) => setTimeout(r, 300));
      }
      proxy.restore();
      // Bounded by the wait itself: pools running within a minute of the last cut, or an exit, fails here.
      const ran = await Promise.race([proc.logged('worker pools running', 60_000).then(() => true), proc.ended.then(() => false)]);
      expect(ran, proc.output()).toBe(true);
      expect(proc.child.exitCode).toBeNull();
    } finally {
      proc.child.kill('SIGTERM');
      await proxy.close();
    }
    expect((await proc.exited).code).toBe(0);
    expect(proc.output()).not.toContain('start failed');
  });

  it('stops with one clear line naming Postgres once START_DEADLINE_MS is over', async ({ env }) => {
    const { proxy, url } = await proxiedDatabase(env);
    proxy.cut();
    try {
      const out = await runTs(['bin/start.ts', 'workers', '--pools', 'maintenance'], {
        ...envFor(env.config),
        DATABASE_URL: url,
        START_DEADLINE_MS: '3000',
      });
      expect(out.code).toBe(1);
      const lines = out.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^start failed: Postgres at 127\.0\.0\.1:\d+ kept cutting connections while checking Postgres and Redis/);
      expect(lines[0]).toMatch(/ for 3 s \(START_DEADLINE_MS\); last: \S/);
      // It kept trying until the deadline instead of giving up at the first cut: the proxy cut it more than once.
      expect(proxy.refused()).toBeGreaterThan(1);
    } finally {
      await proxy.close();
    }
  });
});
