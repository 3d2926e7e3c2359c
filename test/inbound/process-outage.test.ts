import { createServer, type Server, type Socket } from 'node:net';
import knex from 'knex';
import pg from 'pg';
import { afterAll, describe, expect } from 'vitest';
import { configWith } from '../helpers/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { isInfraError } from '../../src/errors.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { handOn, MAX_PARSE_TRIES, processWithinTries, storeInbound } from '../../src/inbound/intake.service.js';
import { getLead } from '../../src/leads/leads.service.js';
import { createLogger } from '../../src/logger.js';
import { createRedis } from '../../src/redis.js';
import { startPools } from '../../workers/main.js';
import { buildMailedLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { privateRedis, tcpProxy } from '../helpers/outages.js';
import { freePort, waitFor } from '../helpers/processes.js';
import { rows } from '../helpers/rows.js';
import { backdate } from '../helpers/row-setup.js';

// Inbound processing while Postgres or Redis is away: the errors pg, knex and ioredis really throw are
// classified as the stores being out of reach, so a good message is retried and never kept `malformed`.

let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let redis: Awaited<ReturnType<typeof privateRedis>>;
let deps: Deps;
const closers: (() => Promise<unknown>)[] = [];
it.beforeAll(async ({ env }) => {
  proxy = await tcpProxy(Number(new URL(env.config.databaseUrl).port || 5432));
  redis = await privateRedis();
  // The service under test reaches Postgres only through the proxy, and its own Redis; the test reads directly.
  deps = createDeps(
    configWith({ DATABASE_URL: proxiedUrl(env), REDIS_URL: redis.url, QUEUE_PREFIX: env.config.queuePrefix }),
    createLogger('silent'),
  );
  await deps.ready();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await deps?.close();
  await proxy?.close();
  await redis?.stop();
});

function proxiedUrl(env: TestEnv): string {
  const url = new URL(env.config.databaseUrl);
  url.port = String(proxy.port);
  return url.toString();
}

/** A server that takes connections and never answers (a Postgres behind a dead link). */
async function blackhole(): Promise<{ port: number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return { port };
}

const caught = async (p: Promise<unknown>): Promise<Error> => {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
};

describe('the errors the store clients really throw', () => {
  it('pg: a connect that times out, a connection cut mid-query, a query on the broken client', async ({ env }) => {
    const hole = await blackhole();
    const url = new URL(env.config.databaseUrl);
    url.port = String(hole.port);
    const timedOut = await caught(new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 200 }).connect());
    expect(isInfraError(timedOut), timedOut.message).toBe(true);

    const client = new pg.Client({ connectionString: proxiedUrl(env) });
    client.on('error', () => {});
    await client.connect();
    const sleeping = caught(client.query('SELECT pg_sleep(30)'));
    await waitFor(
      async () => (await env.deps.db.raw(`SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'`)).rows.length > 0,
      'sleep',
    );
    proxy.cut();
    try {
      const cut = await sleeping;
      expect(isInfraError(cut), cut.message).toBe(true);
      const after = await caught(client.query('SELECT 1'));
      expect(isInfraError(after), after.message).toBe(true);
      const refused = await caught(new pg.Client({ connectionString: proxiedUrl(env) }).connect());
      expect(isInfraError(refused), refused.message).toBe(true);
    } finally {
      proxy.restore();
    }
  });

  it('knex: a pool that cannot get a connection (refused, and never answered)', async ({ env }) => {
    const hole = await blackhole();
    const url = new URL(env.config.databaseUrl);
    url.port = String(hole.port);
    for (const connectionString of [url.toString(), 'postgres://postgres@127.0.0.1:1/none']) {
      const db = knex({ client: 'pg', connection: { connectionString, connectionTimeoutMillis: 3_000 }, acquireConnectionTimeout: 300 });
      try {
        const err = await caught(db.raw('SELECT 1'));
        expect(isInfraError(err), `${err.name}: ${err.message}`).toBe(true);
      } finally {
        await db.destroy();
      }
    }
  });

  it('ioredis: a worker connection whose Redis stops, a producer connection to a stopped Redis', async () => {
    const own = await privateRedis();
    const worker = createRedis(own.url, 'worker', { maxRetriesPerRequest: 1 });
    let producer: ReturnType<typeof createRedis> | null = null;
    try {
      expect(await worker.ping()).toBe('PONG');
      await own.stop();
      const retried = await caught(worker.set('k', 'v'));
      expect(isInfraError(retried), `${retried.name}: ${retried.message}`).toBe(true);
      producer = createRedis(own.url, 'producer');
      const offline = await caught(producer.set('k', 'v'));
      expect(isInfraError(offline), `${offline.name}: ${offline.message}`).toBe(true);
    } finally {
      producer?.disconnect();
      worker.disconnect();
    }
  });
});

/**
 * Jane's reply to a mailed lead, stored as the SMTP listener stores it, on the try after which a failure
 * that is not a store's keeps it malformed (its earlier tries failed).
 */
async function replyOnLastTry(env: TestEnv) {
  const { accountId, leadId, thread } = await buildMailedLead(env.deps.db, (await env.tenant()).accountId);
  const id = await storeInbound(env.deps, {
    accountId,
    via: 'smtp',
    mailFrom: 'jane@acme.test',
    rcptTo: [`reply+${thread.replyToken}@localhost`],
    raw: mailFixture('gmail-reply', thread),
  });
  await backdate(env, 'inbound_messages', { id }, { attempts: MAX_PARSE_TRIES - 1 });
  return { accountId, leadId, id };
}

describe('a good message processed while the stores blip', () => {
  it('Postgres cut mid-transaction on its last counted try: retried by the pool, applied, never malformed', async ({ env }) => {
    const { accountId, leadId, id } = await replyOnLastTry(env);
    // The lead's row held by the test, so processing waits inside its transaction, past the try count.
    const holder = await env.deps.db.transaction();
    await holder('leads').where({ id: leadId }).forUpdate().select('id');
    const pools = await startPools(deps, ['inbound-mail']);
    try {
      await handOn(deps, id);
      await waitFor(
        async () =>
          (await env.deps.db.raw(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%leads%'`)).rows.length >
          0,
        'processing waiting on the lead',
      );
      expect((await inboundRepository(env.deps.db).find(id))?.attempts).toBe(MAX_PARSE_TRIES);
      proxy.cut();
      proxy.restore();
      await holder.rollback();
      await waitFor(async () => (await inboundRepository(env.deps.db).find(id))?.status !== 'received', 'settled', 60_000);
      const row = await inboundRepository(env.deps.db).find(id);
      expect(row).toMatchObject({ status: 'applied', kind: 'reply' });
      expect(row!.attempts).toBeGreaterThan(MAX_PARSE_TRIES);
      expect(await getLead(env.deps.db, accountId, leadId)).toMatchObject({ status: 'replied', replyKind: 'interested' });
    } finally {
      if (!holder.isCompleted()) await holder.rollback();
      await pools.close();
    }
  }, 90_000);

  it('Redis stopped while a reply is applied: applied all the same, its wake left for the sweeper to queue', async ({ env }) => {
    const { accountId, id } = await replyOnLastTry(env);
    await redis.stop();
    try {
      expect(await processWithinTries(deps, id, deps.logger)).toBe('done');
    } finally {
      await redis.start();
    }
    expect(await inboundRepository(env.deps.db).find(id)).toMatchObject({ status: 'applied', attempts: MAX_PARSE_TRIES });
    const [wake] = await rows(env, 'agent_turns', { account_id: accountId, kind: 'wake' });
    expect(wake.status).toBe('queued');
  });
});
