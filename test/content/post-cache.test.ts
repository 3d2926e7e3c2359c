import { describe, expect } from 'vitest';
import { CONTENT_CHANNEL, postCache } from '../../src/content/post-cache.js';
import { listenUrl } from '../../src/db.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { auth, published } from './helpers.js';

/** A change written behind the service's back (no notification): only a read of Postgres sees it. */
const sneak = (env: TestEnv, accountId: string, slug: string, title: string) =>
  env.deps.db('posts').where({ account_id: accountId, slug }).update({ title });

describe("a process's memory of posts (GET /content/posts/{slug})", () => {
  it('answers from memory while listening, and forgets when another process announces a change', async ({ env }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Remembered' });
    const get = () => env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token));
    await get();
    await until(async () => postCache(listenUrl(env.config)).ticket(t.accountId), 10_000);
    const first = await get();
    expect(first.body.post.title).toBe('Remembered');

    await sneak(env, t.accountId, slug, 'Changed quietly');
    const remembered = await get();
    expect(remembered.body.post.title).toBe('Remembered');
    expect((await get().set('If-None-Match', String(first.headers.etag))).status).toBe(304);

    // What another process's publication does as it commits.
    await env.deps.db.raw('select pg_notify(?, ?)', [CONTENT_CHANNEL, t.accountId]);
    const fresh = await until(async () => {
      const res = await get();
      return res.body.post.title === 'Changed quietly' ? res : null;
    }, 10_000);
    expect(fresh.headers.etag).not.toBe(first.headers.etag);
    expect((await get().set('If-None-Match', String(first.headers.etag))).status).toBe(200);
  });

  it('reads Postgres again once its listener is lost, and listens again', async ({ env }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Before' });
    const get = () => env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token));
    await get();
    await until(async () => postCache(listenUrl(env.config)).ticket(t.accountId), 10_000);
    await get();
    await sneak(env, t.accountId, slug, 'After');
    expect((await get()).body.post.title).toBe('Before');

    await env.deps.db.raw(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query = ?`, [
      `LISTEN ${CONTENT_CHANNEL}`,
    ]);
    const read = await until(async () => {
      const res = await get();
      return res.body.post.title === 'After' ? res : null;
    }, 10_000);
    expect(read.status).toBe(200);
    // It listens again (after RECONNECT_MS) and remembers again.
    await until(async () => postCache(listenUrl(env.config)).ticket(t.accountId), 15_000);
  });
});
