import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import {
  compare,
  cpuMultiple,
  fmt,
  freePort,
  pct,
  ratioTable,
  startServer,
  stop,
  type Load,
  type Target,
  NO_RATE_LIMITS,
  seeding,
} from './lib.js';
import type { BenchContext, Section } from './run.js';

/**
 * Authenticated read: `GET /api/v1/review` over the demo queue (the limiter script in Redis; the page from the API
 * process's cache while the queue version holds) and `GET /api/v1/me` (limiter only), against the bare
 * baselines, among them the floor of an authenticated read: bare Express making one Redis call and sending the same page bytes.
 */
const REVIEW = 'GET /api/v1/review (auth + limiter + queue page)';
const PAGE_FLOOR = 'Express + the same page (card JSON rendered by Postgres) + 1 Redis call';
const BYTES_FLOOR = 'Express + 1 Redis call + the same page bytes (from memory)';
const ME = 'GET /api/v1/me (auth + limiter + handler)';

export async function httpRead(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  const { account, cards, token } = await seeding(config, async (db) => {
    const account = await createAccount(db, 'Bench');
    const cards = await seedReviewCards(db, account.id);
    const { token } = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:read'] });
    return { account, cards, token };
  });

  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const [pHttp, pExpress, pFloor, pPage, pApi, pBytes] = ports as [number, number, number, number, number, number];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gas-bench-page-'));
  const servers = [
    await startServer(['bench/servers/baseline.ts', 'http', String(pHttp)], {}, `http://127.0.0.1:${pHttp}/`),
    await startServer(['bench/servers/baseline.ts', 'express', String(pExpress)], {}, `http://127.0.0.1:${pExpress}/`),
    await startServer(
      ['bench/servers/baseline.ts', 'express-pg-redis', String(pFloor), config.databaseUrl, config.redisUrl],
      {},
      `http://127.0.0.1:${pFloor}/`,
    ),
    await startServer(
      ['bench/servers/baseline.ts', 'express-page-redis', String(pPage), config.databaseUrl, config.redisUrl, account.id],
      {},
      `http://127.0.0.1:${pPage}/`,
    ),
    await startServer(
      ['bin/start.ts', 'api'],
      {
        DATABASE_URL: config.databaseUrl,
        PORT: String(pApi),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ...NO_RATE_LIMITS,
      },
      `http://127.0.0.1:${pApi}/healthz`,
    ),
  ];
  try {
    // The very bytes GET /review answers, served by the floor from memory.
    const auth = { authorization: `Bearer ${token}` };
    const page = Buffer.from(await (await fetch(`http://127.0.0.1:${pApi}/api/v1/review`, { headers: auth })).arrayBuffer());
    await writeFile(path.join(dir, 'page.json'), page);
    servers.push(
      await startServer(
        ['bench/servers/baseline.ts', 'express-bytes-redis', String(pBytes), path.join(dir, 'page.json'), config.redisUrl],
        {},
        `http://127.0.0.1:${pBytes}/`,
      ),
    );
    const targets: Target[] = [
      { name: 'bare node:http', url: `http://127.0.0.1:${pHttp}/`, server: servers[0] },
      { name: 'bare Express', url: `http://127.0.0.1:${pExpress}/`, server: servers[1] },
      { name: 'Express + 1 PG query + 1 Redis call', url: `http://127.0.0.1:${pFloor}/`, server: servers[2] },
      { name: PAGE_FLOOR, url: `http://127.0.0.1:${pPage}/`, server: servers[3] },
      { name: BYTES_FLOOR, url: `http://127.0.0.1:${pBytes}/`, server: servers[5] },
      { name: REVIEW, url: `http://127.0.0.1:${pApi}/api/v1/review`, headers: auth, server: servers[4] },
      { name: ME, url: `http://127.0.0.1:${pApi}/api/v1/me`, headers: auth, server: servers[4] },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const base = results.get('bare Express')!;
    const [floor, bytes, review, me] = [results.get(PAGE_FLOOR)!, results.get(BYTES_FLOOR)!, results.get(REVIEW)!, results.get(ME)!];
    const times = (r: Load) => cpuMultiple(r, base) ?? 'an unmeasured multiple of';
    const pageBytes = page.length;
    return {
      title: 'Authenticated read',
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. The review queue holds the`,
        `${cards.length} demo cards of \`seed demo\` (one page, every card in it).`,
        '',
        ...ratioTable(targets, results, 'bare Express'),
        '',
        `Target: \`GET /review\` ≥ 80% of the floor that makes one Redis call and sends the same page bytes ` +
          `(${fmt(pageBytes / 1024, 1)} KB) from memory. Measured: **${pct(review.rps / bytes.rps)}** ` +
          `(CPU per request ${times(review)} bare Express's, the floor's ${times(bytes)}).`,
        `Target: authenticated read (\`GET /review\`) ≥ 45% of bare Express, p99 ≤ 10 ms. Measured: ` +
          `${pct(review.rps / base.rps)}, p99 ${fmt(review.p99, 1)} ms.`,
        '',
        "- The page comes from the API process's memory while the limiter script, which every request runs anyway, reports",
        '  that the account\'s queue version has not moved (docs/decisions/stores.md, "Reads that skip Postgres"); the benchmark\'s',
        '  queue never changes, so every request after the first is served from memory: this is the read path at its best.',
        `- Read from Postgres on every request, the floor that only reads this page and sends it serves ` +
          `${pct(floor.rps / base.rps)} of bare Express; \`GET /review\` is at ${pct(review.rps / floor.rps)} of it.`,
        `- \`GET /me\` (auth and limiter, no page) serves ${pct(me.rps / base.rps)} of bare Express at ${times(me)} its CPU.`,
        `- p99 ≤ 10 ms: bare Express's own p99 in this run is ${fmt(base.p99, 1)} ms at the same 10 connections.`,
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    await rm(dir, { recursive: true, force: true });
  }
}
