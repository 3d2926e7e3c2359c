/**
 * Webhook intake: accepted deliveries through `POST /api/webhook/hook/whk_…` on a real API process
 * (Postgres finding the hook and logging the delivery, rolling-hour script in Redis, BullMQ add; POSTs arriving together are
 * gathered into one statement, one pipeline and one addBulk), with the hourly
 * limits raised by configuration, beside bare Express and an Express floor measured in the same run.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../src/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { createHook } from '../src/webhooks/webhooks.service.js';
import { compare, fmt, freePort, startServer, stop, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchwhk}';
const FLOOR_PREFIX = '{benchfloor}';
const PAYLOAD = JSON.stringify({ event: 'signup', email: 'ada@example.com', plan: 'trial', company: { domain: 'example.com', seats: 12 } });

/** Drops the bench's queues and counters so repeated runs do not fill Redis. */
async function clearRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    for (const [name, prefix] of [['webhook-events', PREFIX], ['bench-floor', FLOOR_PREFIX]] as const) {
      const queue = new Queue(name, { connection: redis, prefix });
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
    }
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'benchwhk:*', 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function webhookIntake(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  await migrate(db);
  await db('webhook_deliveries').delete();
  await db.raw('DROP TABLE IF EXISTS bench_webhook_floor');
  const account = await createAccount(db, 'Bench webhooks');
  await clearRedis(config.redisUrl);

  const [pExpress, pFloor, pWrite, pApi] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const { url } = await createHook(db, `http://127.0.0.1:${pApi}`, { accountId: account.id, label: 'bench' });
  await db.destroy();
  const servers = [
    await startServer(['bench/webhook-servers.ts', 'express-post', String(pExpress)], {}, `http://127.0.0.1:${pExpress}/`),
    await startServer(
      ['bench/webhook-servers.ts', 'express-pg-redis-bullmq', String(pFloor), config.databaseUrl, config.redisUrl, FLOOR_PREFIX],
      {},
      `http://127.0.0.1:${pFloor}/`,
    ),
    await startServer(
      ['bench/webhook-servers.ts', 'express-pg-insert-redis-bullmq', String(pWrite), config.databaseUrl, config.redisUrl, FLOOR_PREFIX],
      {},
      `http://127.0.0.1:${pWrite}/`,
    ),
    await startServer(
      // BENCH_CPU_PROF=dir: the API process writes a CPU profile there (node --cpu-prof).
      [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []), 'bin/start.ts', 'api'],
      {
        DATABASE_URL: config.databaseUrl,
        QUEUE_PREFIX: PREFIX,
        PORT: String(pApi),
        HOST: '127.0.0.1',
        BASE_URL: `http://127.0.0.1:${pApi}`,
        LOG_LEVEL: 'info',
        // Limits high enough that the benchmark measures accepted deliveries, not 429s.
        WEBHOOK_HOOK_PER_HOUR: '100000000',
        WEBHOOK_ACCOUNT_PER_HOUR: '100000000',
      },
      `http://127.0.0.1:${pApi}/healthz`,
    ),
  ];
  try {
    const post = { method: 'POST' as const, body: PAYLOAD, headers: { 'content-type': 'application/json' } };
    const targets: Target[] = [
      { name: 'bare Express (JSON POST → 202)', url: `http://127.0.0.1:${pExpress}/`, ...post },
      { name: 'Express + 1 PG query + 1 Redis call + 1 BullMQ add', url: `http://127.0.0.1:${pFloor}/`, ...post },
      { name: 'Express + 1 PG INSERT (committed) + 1 Redis call + 1 BullMQ add', url: `http://127.0.0.1:${pWrite}/`, ...post },
      { name: 'POST /api/webhook/hook/whk_… (accepted)', url, ...post },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const express = results.get(targets[0]!.name)!.rps;
    const rows = targets.map((t) => {
      const r = results.get(t.name)!;
      return `| ${t.name} | ${fmt(r.rps)} | ${fmt((r.rps / express) * 100, 1)}% | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.errors + r.non2xx} |`;
    });
    const hook = results.get(targets[3]!.name)!;
    const writeFloor = results.get(targets[2]!.name)!;
    return {
      title: 'Webhook intake',
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. ${Buffer.byteLength(PAYLOAD)}-byte JSON payload;`,
        'hourly limits raised by `WEBHOOK_HOOK_PER_HOUR` / `WEBHOOK_ACCOUNT_PER_HOUR`. Each accepted delivery: token lookup and committed delivery row',
        '(Postgres), the rolling-hour script (Redis), the `webhook-events` job (BullMQ); POSTs arriving together share the statement and its commit,',
        'one Redis pipeline and one addBulk (group commit), each answering once its own row is committed and job queued. No worker runs, so jobs wait in Redis.',
        '',
        '| target | req/s | of bare Express | p50 ms | p99 ms | errors + non-2xx |',
        '|---|---:|---:|---:|---:|---:|',
        ...rows,
        '',
        `Target (issue 5): ≥ 40% of bare Express, p99 ≤ 10 ms at 10 connections. Measured: ${fmt((hook.rps / express) * 100, 1)}%, p99 ${fmt(hook.p99, 1)} ms;`,
        `${fmt((hook.rps / writeFloor.rps) * 100, 1)}% of the floor with a committed write. The delivery row is committed before the 202`,
        '(synchronous commit: a 202 is never lost to a Postgres crash), which the select-only floor does not pay.',
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    await clearRedis(config.redisUrl);
  }
}
