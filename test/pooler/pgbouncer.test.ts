import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { describe, expect, inject } from 'vitest';
import { configWith } from '../helpers/config.js';
import { postCache } from '../../src/content/post-cache.js';
import { createDb, listenUrl, prepareDatabase, run, withConnection, type Statement } from '../../src/db.js';
import { auth, published } from '../content/helpers.js';
import { testDatabaseName, urlFor, withAdminClient } from '../helpers/db.js';
import { setupTestEnv } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { ONE_SERVER_DB, viaPgbouncer } from '../helpers/pgbouncer.js';

// Only in the `pgbouncer` project (vitest.config.ts): this file's world reaches Postgres through the run's
// PgBouncer in transaction pooling, with DATABASE_POOLER=transaction. What the pooler cannot carry, why
// the setting is needed, and what the service does instead (docs/decisions/stores.md, "Postgres behind a pooler").

const port = () => {
  const p = inject('pgbouncerPort');
  if (p === undefined) throw new Error('this file runs only in the pgbouncer project');
  return p;
};

async function onClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const oneServer = () => viaPgbouncer(urlFor(ONE_SERVER_DB), port());

describe('the test PgBouncer', () => {
  it("pools transactions, and this file's service reaches its database only through it", async ({ env }) => {
    const url = new URL(env.config.databaseUrl);
    expect(url.port).toBe(String(port()));
    expect(env.config.databasePooler).toBe('transaction');
    const database = url.pathname.slice(1);
    await env.deps.db.raw('SELECT 1');
    const admin = viaPgbouncer(urlFor('pgbouncer'), port());
    const config = await onClient(admin, (c) => c.query<{ key: string; value: string }>('SHOW CONFIG'));
    expect(config.rows.find((r) => r.key === 'pool_mode')?.value).toBe('transaction');
    const pools = await onClient(admin, (c) => c.query<{ database: string; pool_mode: string }>('SHOW POOLS'));
    expect(pools.rows.filter((r) => r.database === database).map((r) => r.pool_mode)).toEqual(['transaction']);
  });

  it('hands one server connection to several clients: a named statement collides unless the setting sends it unnamed', async () => {
    const stmt: Statement = { name: 'pooler-probe', text: 'SELECT $1::int AS n' };
    const twoClients = async (pooler: 'none' | 'transaction') => {
      const db = createDb(oneServer(), 2, undefined, pooler);
      try {
        return await withConnection(db, (a) =>
          withConnection(db, async (b) => [await run(a, stmt, [1]), await run(b, stmt, [2]).catch((err: Error) => err.message)]),
        );
      } finally {
        await onClient(oneServer(), (c) => c.query('DEALLOCATE ALL'));
        await db.destroy();
      }
    };
    expect(await twoClients('none')).toEqual([[{ n: 1 }], 'prepared statement "pooler-probe" already exists']);
    expect(await twoClients('transaction')).toEqual([[{ n: 1 }], [{ n: 2 }]]);
  });

  it('hands one session to several clients: a session advisory lock taken by one is "taken" by the next too', async () => {
    const tryLock = (c: pg.Client) => c.query<{ got: boolean }>('SELECT pg_try_advisory_lock(7301, 1) AS got').then((r) => r.rows[0]!.got);
    const got = await onClient(oneServer(), async (a) => onClient(oneServer(), async (b) => [await tryLock(a), await tryLock(b)]));
    await onClient(oneServer(), (c) => c.query('SELECT pg_advisory_unlock_all()'));
    // Two holders of one lock: why the turn lock is a transaction's behind a pooler (src/agent/turns/turn-lock.ts).
    expect(got).toEqual([true, true]);
  });
});

describe('migrating through the pooler, with no direct URL', () => {
  it('creates the database and applies every migration, once', async () => {
    const name = testDatabaseName();
    const config = configWith({
      DATABASE_URL: viaPgbouncer(urlFor(name), port()),
      DATABASE_POOLER: 'transaction',
      DATABASE_DIRECT_URL: '',
    });
    expect(config.databaseDirectUrl).toBeNull();
    const migrations = (await readdir(new URL('../../migrations/', import.meta.url))).filter((f) => f.endsWith('.ts'));
    try {
      const first = await prepareDatabase(config);
      expect(first.created).toBe(true);
      expect(first.applied).toHaveLength(migrations.length);
      expect(await prepareDatabase(config)).toEqual({ created: false, applied: [] });
    } finally {
      await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    }
  });
});

describe('the posts memory behind the pooler with no direct URL', () => {
  it('never listens, and every read of a post reads Postgres', async () => {
    const bare = await setupTestEnv({ env: { DATABASE_DIRECT_URL: '' } });
    try {
      expect(listenUrl(bare.config)).toBeNull();
      const t = await bare.tenant();
      const { slug } = await published(bare, t, { title: 'First' });
      const get = () => bare.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token));
      const first = await get();
      expect(first.body.post.title).toBe('First');
      expect(postCache(null).ticket(t.accountId)).toBeNull();
      // A change behind the service's back (no notification) shows on the very next read.
      await bare.deps.db('posts').where({ account_id: t.accountId, slug }).update({ title: 'Second' });
      expect((await get()).body.post.title).toBe('Second');
      expect((await get().set('If-None-Match', String(first.headers.etag))).status).toBe(200);
      const database = new URL(bare.config.databaseUrl).pathname.slice(1);
      const listeners = await withAdminClient((c) =>
        c.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`, [database]),
      );
      expect(listeners.rows).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});
