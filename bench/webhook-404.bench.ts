/**
 * Webhook 404s: what a POST to a token no live hook has costs a real API process, and whether the
 * kinds of dead token can be told apart by time. Unknown (a new one each time, and one repeated),
 * disabled, deleted and regenerated-away tokens are refused in interleaved sequential rounds (medians
 * per kind); then a flood of unknown tokens runs beside bare Express, with the Postgres transactions
 * the database counted meanwhile. Tests check that the kinds get the same answer and make no Postgres
 * statement (test/webhooks/intake.test.ts); the timing belongs here, away from a loaded test run.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { registryKey } from '../src/webhooks/live-hooks.js';
import { createHook, deleteHook, disableHook, regenerateHook } from '../src/webhooks/webhooks.service.js';
import { compare, fmt, freePort, median, ratioTable, startServer, stop, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{bench404}';
const REGISTRY = registryKey({ queuePrefix: PREFIX });
const PAYLOAD = JSON.stringify({ event: 'signup', email: 'ada@example.com' });
/** Sequential requests per kind of token: enough for a stable median, short enough for every run. */
const SAMPLES = 150;

const randomToken = () => `whk_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`;

async function xactCommits(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
    const { rows } = await client.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [name]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

async function timedPost(url: string): Promise<{ ms: number; status: number }> {
  const t0 = process.hrtime.bigint();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: PAYLOAD });
  await res.arrayBuffer();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, status: res.status };
}

export async function webhook404(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  await migrate(db);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  const [pExpress, pApi] = await Promise.all([freePort(), freePort()]);
  const base = `http://127.0.0.1:${pApi}`;
  const deps = { config, db, redis };
  const account = await createAccount(db, 'Bench webhook 404s');
  // A registry left by an earlier run names hooks of a dropped database: start without it.
  await redis.del(REGISTRY);
  const make = async (label: string) => {
    const { hookId, url } = await createHook(deps, base, { accountId: account.id, label });
    return { hookId, path: new URL(url).pathname };
  };
  const [disabled, deleted, regenerated] = [await make('disabled'), await make('deleted'), await make('regenerated')];
  await disableHook(deps, disabled.hookId);
  await deleteHook(deps, deleted.hookId);
  await regenerateHook(deps, base, regenerated.hookId);
  redis.disconnect();
  await db.destroy();

  const servers = [
    await startServer(['bench/webhook-servers.ts', 'express-post', String(pExpress)], {}, `http://127.0.0.1:${pExpress}/`),
    await startServer(
      ['bin/start.ts', 'api'],
      { DATABASE_URL: config.databaseUrl, QUEUE_PREFIX: PREFIX, PORT: String(pApi), HOST: '127.0.0.1', BASE_URL: base, LOG_LEVEL: 'warn' },
      `${base}/healthz`,
    ),
  ];
  try {
    const repeated = `/api/webhook/hook/${randomToken()}`;
    const kinds: Record<string, () => string> = {
      'unknown (new each time)': () => `/api/webhook/hook/${randomToken()}`,
      'unknown (repeated)': () => repeated,
      disabled: () => disabled.path,
      deleted: () => deleted.path,
      'regenerated away': () => regenerated.path,
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
    // Warm-up, then interleaved rounds so drift on a noisy machine hits every kind alike.
    for (const path of Object.values(kinds)) await timedPost(`${base}${path()}`);
    for (let i = 0; i < SAMPLES; i++) {
      for (const [kind, path] of Object.entries(kinds)) {
        const { ms, status } = await timedPost(`${base}${path()}`);
        if (status !== 404) throw new Error(`${kind} answered ${status}, not 404`);
        times[kind]!.push(ms);
      }
    }
    const medians = Object.values(times).map(median);
    const spread = Math.max(...medians) - Math.min(...medians);
    const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

    const post = { method: 'POST' as const, body: PAYLOAD, headers: { 'content-type': 'application/json' } };
    const targets: Target[] = [
      { name: 'bare Express (JSON POST → 202)', url: `http://127.0.0.1:${pExpress}/`, ...post, server: servers[0] },
      {
        name: 'POST /api/webhook/hook/whk_… (unknown token → 404)',
        url: `${base}/api/webhook/hook/${randomToken()}`,
        ...post,
        server: servers[1],
      },
    ];
    const commitsBefore = await xactCommits(config.databaseUrl);
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    // Backends report their counts when idle for a moment; give them that before reading.
    await new Promise((r) => setTimeout(r, 2_000));
    const commits = (await xactCommits(config.databaseUrl)) - commitsBefore;
    const flood = results.get(targets[1]!.name)!;
    const floodRequests = flood.rps * ctx.seconds * ctx.rounds;
    return {
      title: 'Webhook 404s',
      body: [
        `Sequential POSTs to a live API process, ${SAMPLES} per kind of dead token in interleaved rounds (one a time, so each time is one`,
        'request alone); every kind is the same work: one SHA-256 and one lookup in the live-hooks registry in Redis, no ' +
          'Postgres statement.',
        '',
        '| token | median ms | p90 ms |',
        '|---|---:|---:|',
        ...Object.entries(times).map(([kind, xs]) => `| ${kind} | ${fmt(median(xs), 2)} | ${fmt(p90(xs), 2)} |`),
        '',
        `Spread of the medians: ${fmt(spread, 2)} ms (${fmt((spread / Math.min(...medians)) * 100, 1)}% of the fastest).`,
        '',
        `Flood of one unknown token, 10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s beside bare ` +
          `Express (its 404s are the "non-2xx"):`,
        '',
        ...ratioTable(targets, results, targets[0]!.name),
        '',
        `Postgres transactions committed in the bench database during the flood (about ${fmt(floodRequests)} 404s, plus the ` +
          `warm-up): ${fmt(commits)}`,
        '(the stats of idle backends, and this count, include the few statements of the measuring connection itself).',
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    const cleanup = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
    await cleanup.del(REGISTRY).catch(() => 0);
    cleanup.disconnect();
  }
}
