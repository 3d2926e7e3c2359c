import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../src/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { compare, fmt, freePort, startServer, stop, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

/**
 * Authenticated read: `GET /api/v1/review` over the demo queue (token lookup and queue page in Postgres, limiter
 * script in Redis) and `GET /api/v1/me` (token lookup and limiter only), against the bare baselines.
 */
const REVIEW = 'GET /api/v1/review (auth + limiter + queue page)';
const PAGE_FLOOR = 'Express + the same page SELECT (rows as pg returns them) + 1 Redis call';

export async function httpRead(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  await migrate(db);
  const account = await createAccount(db, 'Bench');
  const cards = await seedReviewCards(db, account.id);
  const { token } = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:read'] });
  await db.destroy();

  const [pHttp, pExpress, pFloor, pPage, pApi] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const servers = [
    await startServer(['bench/servers/baseline.ts', 'http', String(pHttp)], {}, `http://127.0.0.1:${pHttp}/`),
    await startServer(['bench/servers/baseline.ts', 'express', String(pExpress)], {}, `http://127.0.0.1:${pExpress}/`),
    await startServer(['bench/servers/baseline.ts', 'express-pg-redis', String(pFloor), config.databaseUrl, config.redisUrl], {}, `http://127.0.0.1:${pFloor}/`),
    await startServer(['bench/servers/baseline.ts', 'express-page-redis', String(pPage), config.databaseUrl, config.redisUrl, account.id], {}, `http://127.0.0.1:${pPage}/`),
    await startServer(
      ['bin/start.ts', 'api'],
      {
        DATABASE_URL: config.databaseUrl,
        PORT: String(pApi),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        // Limits high enough that the benchmark measures the work, not 429s.
        RATE_READS_PER_MINUTE: '100000000',
        RATE_READS_BURST: '100000000',
        RATE_ACCOUNT_PER_MINUTE: '100000000',
        RATE_ACCOUNT_BURST: '100000000',
      },
      `http://127.0.0.1:${pApi}/healthz`,
    ),
  ];
  try {
    const targets: Target[] = [
      { name: 'bare node:http', url: `http://127.0.0.1:${pHttp}/` },
      { name: 'bare Express', url: `http://127.0.0.1:${pExpress}/` },
      { name: 'Express + 1 PG query + 1 Redis call', url: `http://127.0.0.1:${pFloor}/` },
      { name: PAGE_FLOOR, url: `http://127.0.0.1:${pPage}/` },
      { name: REVIEW, url: `http://127.0.0.1:${pApi}/api/v1/review`, headers: { authorization: `Bearer ${token}` } },
      { name: 'GET /api/v1/me (auth + limiter + handler)', url: `http://127.0.0.1:${pApi}/api/v1/me`, headers: { authorization: `Bearer ${token}` } },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const express = results.get('bare Express')!.rps;
    const rows = targets.map((t) => {
      const r = results.get(t.name)!;
      return `| ${t.name} | ${fmt(r.rps)} | ${fmt((r.rps / express) * 100, 1)}% | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.errors + r.non2xx} |`;
    });
    const review = results.get(REVIEW)!;
    return {
      title: 'Authenticated read',
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. The review queue holds the`,
        `${cards.length} demo cards of \`seed demo\` (one page, every card in it).`,
        '',
        '| target | req/s | of bare Express | p50 ms | p99 ms | errors + non-2xx |',
        '|---|---:|---:|---:|---:|---:|',
        ...rows,
        '',
        `\`GET /review\` is ${fmt((review.rps / results.get(PAGE_FLOOR)!.rps) * 100, 1)}% of the floor that reads and returns the same page with no auth, limiter, mapping or logging.`,
        `Target (issue 8): authenticated read (\`GET /review\`) ≥ 45% of bare Express, p99 ≤ 10 ms. Measured: ${fmt((review.rps / express) * 100, 1)}%, p99 ${fmt(review.p99, 1)} ms.`,
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
  }
}
