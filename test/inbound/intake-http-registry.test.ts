import { describe, expect } from 'vitest';
import { inboundRegistryKey, liveInbound } from '../../src/inbound/live-inbound.js';
import { adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rawMessage } from '../helpers/smtp-client.js';

// The inbound URL's secrets are checked against a registry of live secrets in Redis before Postgres:
// a flood of well-formed unknown secrets makes no Postgres statement.

/** Counts the statements the file's knex pool sends while `fn` runs. */
async function statements(env: TestEnv, fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const onQuery = (q: { sql: string }) => seen.push(q.sql);
  env.deps.db.on('query', onQuery);
  try {
    await fn();
  } finally {
    env.deps.db.off('query', onQuery);
  }
  return seen;
}

async function inboundPath(env: TestEnv, accountId: string): Promise<string> {
  const { out, error } = await adminCall(env, ['mail', 'inbound-url', '--account', accountId]);
  expect(error).toBeUndefined();
  return new URL(String(out!.url)).pathname;
}

const unknown = (i: number) => `/api/mail/inbound/inb_${String(i).padStart(40, 'Q')}`;
const post = (env: TestEnv, path: string) =>
  env
    .api()
    .post(path)
    .set('Content-Type', 'message/rfc822')
    .send(rawMessage({ body: 'hello' }));

async function flood(env: TestEnv, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 25) {
    const batch = await Promise.all(Array.from({ length: Math.min(25, n - i) }, (_, j) => post(env, unknown(i + j))));
    statuses.push(...batch.map((r) => r.status));
  }
  return statuses;
}

describe('the inbound URL before Postgres', () => {
  it('answers a flood of well-formed unknown secrets 404 with no Postgres statement; a known secret still stores', async ({ env }) => {
    const { accountId } = await env.tenant();
    const path = await inboundPath(env, accountId);
    await liveInbound(env.deps).ready();
    const sql = await statements(env, async () => {
      expect(new Set(await flood(env, 200))).toEqual(new Set([404]));
    });
    expect(sql).toEqual([]);
    expect((await post(env, path)).status).toBe(202);
  });

  it('follows a replaced secret: the new one works at once, the old one is 404', async ({ env }) => {
    const { accountId } = await env.tenant();
    const first = await inboundPath(env, accountId);
    await liveInbound(env.deps).ready();
    const second = await inboundPath(env, accountId);
    expect((await post(env, second)).status).toBe(202);
    expect((await post(env, first)).status).toBe(404);
    const first404 = await statements(env, async () => {
      expect((await post(env, first)).status).toBe(404);
    });
    expect(first404).toEqual([]);
  });

  it('after Redis lost the registry, asks Postgres (still right) until one rebuild restores it', async ({ env }) => {
    const { accountId } = await env.tenant();
    const path = await inboundPath(env, accountId);
    await liveInbound(env.deps).ready();
    await env.deps.redis.del(inboundRegistryKey(env.config));
    // Untrusted: the door asks Postgres, and answers as before.
    expect((await post(env, unknown(1))).status).toBe(404);
    expect((await post(env, path)).status).toBe(202);
    await liveInbound(env.deps).ready();
    expect(await env.deps.redis.hlen(inboundRegistryKey(env.config))).toBeGreaterThan(1);
    const sql = await statements(env, async () => {
      expect(new Set(await flood(env, 50))).toEqual(new Set([404]));
    });
    expect(sql).toEqual([]);
    expect((await post(env, path)).status).toBe(202);
  });
});
