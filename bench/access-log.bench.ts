import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../src/config.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { compare, fmt, freePort, NO_RATE_LIMITS, pct, ratioTable, seeding, startServer, stop, type Load, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

/**
 * What the access log costs: one API process logging at `info` (a line per request, as shipped) beside
 * one at `warn` (no request line; everything else the same), both serving the cached `GET /review` and
 * `GET /me`, beside the floor of the authenticated read (bare Express, one Redis call, the same page bytes).
 */
const FLOOR = 'Express + 1 Redis call + the same page bytes (from memory)';
const name = (what: string, level: string) => `${what}, LOG_LEVEL=${level}`;
const REVIEW = 'GET /api/v1/review (cached page)';
const ME = 'GET /api/v1/me';

/** Figures of the same benchmark on the request line as it was before it was written by hand (2026-11-27). */
const BEFORE = [
  'Before the line was written by hand (pino building it from an object: the same run of this benchmark, 2026-11-27):',
  '`GET /review` served 0.00× of the floor at info and 0.00× at warn, `GET /me` 0.00× and 0.00×; the line cost 0.0 µs',
  'of CPU, 0.0% of `GET /me`.',
];

export async function accessLog(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  const { cards, token } = await seeding(config, async (db) => {
    const account = await createAccount(db, 'Bench access log');
    const cards = await seedReviewCards(db, account.id);
    const { token } = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:read'] });
    return { cards, token };
  });
  const [pExpress, pInfo, pWarn, pFloor] = (await Promise.all([freePort(), freePort(), freePort(), freePort()])) as [
    number,
    number,
    number,
    number,
  ];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gas-bench-log-'));
  const api = (port: number, level: string) =>
    startServer(
      ['bin/start.ts', 'api'],
      { DATABASE_URL: config.databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: level, ...NO_RATE_LIMITS },
      `http://127.0.0.1:${port}/healthz`,
    );
  const servers = [
    await startServer(['bench/servers/baseline.ts', 'express', String(pExpress)], {}, `http://127.0.0.1:${pExpress}/`),
    await api(pInfo, 'info'),
    await api(pWarn, 'warn'),
  ];
  try {
    const auth = { authorization: `Bearer ${token}` };
    const page = Buffer.from(await (await fetch(`http://127.0.0.1:${pInfo}/api/v1/review`, { headers: auth })).arrayBuffer());
    await writeFile(path.join(dir, 'page.json'), page);
    servers.push(
      await startServer(
        ['bench/servers/baseline.ts', 'express-bytes-redis', String(pFloor), path.join(dir, 'page.json'), config.redisUrl],
        {},
        `http://127.0.0.1:${pFloor}/`,
      ),
    );
    const targets: Target[] = [
      { name: 'bare Express', url: `http://127.0.0.1:${pExpress}/`, server: servers[0] },
      { name: FLOOR, url: `http://127.0.0.1:${pFloor}/`, server: servers[3] },
      { name: name(REVIEW, 'info'), url: `http://127.0.0.1:${pInfo}/api/v1/review`, headers: auth, server: servers[1] },
      { name: name(REVIEW, 'warn'), url: `http://127.0.0.1:${pWarn}/api/v1/review`, headers: auth, server: servers[2] },
      { name: name(ME, 'info'), url: `http://127.0.0.1:${pInfo}/api/v1/me`, headers: auth, server: servers[1] },
      { name: name(ME, 'warn'), url: `http://127.0.0.1:${pWarn}/api/v1/me`, headers: auth, server: servers[2] },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const floor = results.get(FLOOR)!;
    const at = (what: string, level: string) => results.get(name(what, level))!;
    const x = (r: Load) => `${fmt(r.rps / floor.rps, 2)}×`;
    const cost = (what: string) => {
      const [info, warn] = [at(what, 'info'), at(what, 'warn')];
      if (info.cpuUs === undefined || warn.cpuUs === undefined) return `\`${what}\`: CPU not measured.`;
      const us = info.cpuUs - warn.cpuUs;
      return (
        `\`${what}\`: ${x(info)} of the floor at info, ${x(warn)} at warn; at info it serves ${pct(info.rps / warn.rps)} of its ` +
        `rate at warn, and the line costs ${fmt(us, 1)} µs of CPU, ${pct(us / info.cpuUs)} of the request.`
      );
    };
    return {
      title: "The access log's cost",
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. Two API processes`,
        'started alike but for `LOG_LEVEL`: info writes the request line (through the batched stdout destination, to',
        `/dev/null here), warn writes none. The review queue holds the ${cards.length} demo cards (one page).`,
        '',
        ...ratioTable(targets, results, 'bare Express'),
        '',
        `- ${cost(REVIEW)}`,
        `- ${cost(ME)}`,
        '',
        'Target: the line costs a few per cent of a request. Server CPU per request is the steadier figure here; request',
        'rates on these shared machines move by a tenth between rounds.',
        '',
        ...BEFORE,
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    await rm(dir, { recursive: true, force: true });
  }
}
