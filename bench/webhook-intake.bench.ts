/**
 * Webhook intake: accepted deliveries through `POST /api/webhook/hook/whk_…` on a real API process
 * (live-hooks registry and rolling-hour script in Redis, Postgres logging the delivery, BullMQ add; POSTs arriving together are
 * gathered into one statement and one script call, their adds sent together), with the hourly
 * limits raised by configuration, beside bare Express and an Express floor measured in the same run.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { createHook } from '../src/webhooks/webhooks.service.js';
import { compare, cpuMultiple, fmt, freePort, pct, ratioTable, startServer, stop, type Load, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchwhk}';
const FLOOR_PREFIX = '{benchfloor}';
const PAYLOAD = JSON.stringify({ event: 'signup', email: 'ada@example.com', plan: 'trial', company: { domain: 'example.com', seats: 12 } });

/** Drops the bench's queues and counters so repeated runs do not fill Redis. */
async function clearRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    for (const [name, prefix] of [
      ['webhook-events', PREFIX],
      ['bench-floor', FLOOR_PREFIX],
    ] as const) {
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
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  const { url } = await createHook({ config, db, redis }, `http://127.0.0.1:${pApi}`, { accountId: account.id, label: 'bench' }).finally(
    () => redis.disconnect(),
  );
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
      { name: 'bare Express (JSON POST → 202)', url: `http://127.0.0.1:${pExpress}/`, ...post, server: servers[0] },
      { name: 'Express + 1 PG query + 1 Redis call + 1 BullMQ add', url: `http://127.0.0.1:${pFloor}/`, ...post, server: servers[1] },
      {
        name: 'Express + 1 PG INSERT (committed) + 1 Redis call + 1 BullMQ add',
        url: `http://127.0.0.1:${pWrite}/`,
        ...post,
        server: servers[2],
      },
      { name: 'POST /api/webhook/hook/whk_… (accepted)', url, ...post, server: servers[3] },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const [base, selectFloor, writeFloor, hook] = targets.map((t) => results.get(t.name)!) as [Load, Load, Load, Load];
    const times = (r: Load) => cpuMultiple(r, base) ?? 'an unmeasured multiple of';
    return {
      title: 'Webhook intake',
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. ` +
          `${Buffer.byteLength(PAYLOAD)}-byte JSON payload;`,
        'hourly limits raised by `WEBHOOK_HOOK_PER_HOUR` / `WEBHOOK_ACCOUNT_PER_HOUR`. Each accepted delivery: token lookup ' +
          'in the live-hooks registry',
        'and the rolling-hour script (Redis), committed delivery row (Postgres), the `webhook-events` job (BullMQ); POSTs ' +
          'arriving together share the lookup,',
        'the statement and its commit, one script call per account and their BullMQ adds sent together (group commit), each ' +
          'answering once its own row is',
        'committed and job queued.',
        'No worker runs, so jobs wait in Redis.',
        '',
        ...ratioTable(targets, results, targets[0]!.name),
        '',
        `Target: ≥ 40% of bare Express, p99 ≤ 10 ms at 10 connections. Measured: ${pct(hook.rps / base.rps)}, p99 ` +
          `${fmt(hook.p99, 1)} ms;`,
        `${pct(hook.rps / writeFloor.rps)} of the floor with a committed write.`,
        '',
        '**Why the target is missed.** As for the authenticated read, the server is bound by its own CPU (one Node process',
        'sharing two cores with the load generator, Postgres and Redis). Profiles (`node --cpu-prof`, intake against this floor)',
        'found two hot spots, now gone: ioredis building a pipeline for every BullMQ addBulk (it copies all 64 loaded scripts onto',
        'a new object, ~35 µs a request) and one CSPRNG call per delivery id (~15 µs). What is left is spread thin: GC, the',
        'Express router, the request log, the route runner, the unnest arrays of the batch insert, a few µs each.',
        `- The floor that durably logs, counts and queues each delivery and does nothing else serves ` +
          `${pct(writeFloor.rps / base.rps)} of bare`,
        `  Express (${times(writeFloor)} its CPU per request); intake, which also finds the hook, keeps two rolling-hour windows and logs`,
        `  the request, is at ${times(hook)}. ${
          writeFloor.rps / base.rps < 0.4
            ? 'That floor is itself below 40% in this run.'
            : 'In this run that floor reaches 40%, so the margin is what intake does beyond it; runs on this machine have ' +
              'put the same floor between 34% and 44%.'
        } The issue's "about 41%" was measured with a floor`,
        `  whose query writes nothing (here: ${pct(selectFloor.rps / base.rps)}).`,
        '- Intake answers 202 only once the delivery row is committed (synchronous commit, shared by the POSTs that arrive',
        '  together), so an accepted delivery survives a Postgres crash. Answering before the commit is flushed would buy the',
        '  ratio with exactly the deliveries the sender was told not to retry; we do not (docs/decisions/webhooks.md, "Inbound webhooks").',
        `- p99 ≤ 10 ms: bare Express's own p99 in this run is ${fmt(base.p99, 1)} ms at the same 10 connections.`,
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    await clearRedis(config.redisUrl);
  }
}
