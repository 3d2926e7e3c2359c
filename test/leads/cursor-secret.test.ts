import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { encodeCursor } from '../../src/cursor.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { createLogger } from '../../src/logger.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createTestDatabase } from '../helpers/db.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

// Everything both apps log, at every level: the secret must never be in it.
let logged = '';
const sink = new Writable({
  write(chunk, _enc, done) {
    logged += String(chunk);
    done();
  },
});

const runtimes: Deps[] = [];
it.override('options', { env: { CURSOR_SECRET: '' }, logger: createLogger('trace', sink) });
afterAll(async () => {
  for (const deps of runtimes) await deps.close();
});

/** Another process's runtime on `databaseUrl`, with CURSOR_SECRET unset unless given. */
function runtimeOn(env: TestEnv, databaseUrl: string, cursorSecret = ''): Deps {
  const deps = createDeps(
    configWith({ DATABASE_URL: databaseUrl, QUEUE_PREFIX: env.config.queuePrefix, CURSOR_SECRET: cursorSecret }),
    createLogger('trace', sink),
  );
  runtimes.push(deps);
  return deps;
}

async function leadsPage(app: ReturnType<typeof createApp>, token: string, cursor?: string) {
  return request(app)
    .get('/api/v1/leads')
    .query({ limit: 2, ...(cursor ? { cursor } : {}) })
    .set(auth(token));
}

describe('the cursor secret without CURSOR_SECRET', () => {
  it('is one random secret per database: processes starting together agree, another database has its own', async ({ env }) => {
    const fresh = await createTestDatabase();
    try {
      const starting = [runtimeOn(env, fresh.url), runtimeOn(env, fresh.url), runtimeOn(env, fresh.url), runtimeOn(env, fresh.url)];
      const secrets = await Promise.all(starting.map((deps) => deps.cursorSecret()));
      expect(new Set(secrets).size).toBe(1);
      expect(secrets[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The fresh database's own table (not the fixture's, which rows.ts reads), through a process started on it.
      expect(await starting[0]!.db('service_secrets').select('name')).toEqual([{ name: 'cursor' }]);
      // A process started later reads the same one.
      expect(await runtimeOn(env, fresh.url).cursorSecret()).toBe(secrets[0]);
      expect(await env.deps.cursorSecret()).not.toBe(secrets[0]);
      expect(logged).not.toContain(secrets[0]);
    } finally {
      await Promise.all(runtimes.splice(0).map((deps) => deps.close()));
      await fresh.drop();
    }
  });

  it('signs cursors that another process of the deployment accepts, and never shows up in a log', async ({ env }) => {
    const { token, accountId } = await env.tenant(['leads:read']);
    for (let i = 0; i < 5; i++) await upsertLead(env.deps.db, accountId, { domain: `cursor${i}.example.com` });
    const other = createApp(runtimeOn(env, env.config.databaseUrl));
    const first = await leadsPage(env.app, token);
    expect(first.status).toBe(200);
    const second = await leadsPage(other, token, first.body.nextCursor as string);
    expect(second.status).toBe(200);
    expect(second.body.leads).toHaveLength(2);
    const secret = await env.deps.cursorSecret();
    expect(logged.length).toBeGreaterThan(0);
    expect(logged).not.toContain(secret);
    expect(JSON.stringify([first.body, second.body])).not.toContain(secret);
  });

  it('cannot be derived from DATABASE_URL: a cursor signed with its hash is refused', async ({ env }) => {
    const { token, accountId } = await env.tenant(['leads:read']);
    await upsertLead(env.deps.db, accountId, { domain: 'forged.example.com' });
    const guessed = createHash('sha256').update(`gas-cursor:${env.config.databaseUrl}`).digest('hex');
    const forged = encodeCursor(guessed, 'leads', accountId, null, { at: Date.now() + 60_000, seq: 0 });
    const res = await leadsPage(env.app, token, forged);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'cursor is not valid' });
  });

  it('is CURSOR_SECRET when that is set', async ({ env }) => {
    const set = 'an-operator-chosen-secret-0123456789';
    expect(await runtimeOn(env, env.config.databaseUrl, set).cursorSecret()).toBe(set);
  });
});
