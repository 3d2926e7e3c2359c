import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { batchedDestination, createLogger, prebuiltLine, redactUrl } from '../src/logger.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import {
  compare,
  fmt,
  median,
  freePort,
  NO_RATE_LIMITS,
  pct,
  ratioTable,
  seeding,
  startServer,
  stop,
  type Load,
  type Target,
} from './lib.js';
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

/** The same benchmark on the line as pino wrote it from an object, before it was written by hand (2026-11-27). */
const BEFORE = [
  'Before the line was written by hand (pino writing it from an object; this benchmark, 2026-11-27, two runs): info',
  'cost 12.3 and 7.1 µs more CPU than warn on `GET /review` (12.7% and 9.7%), 11.8 and 6.1 µs on `GET /me` (12.6% and 8.6%).',
  "After, in a run before the one above: 7.1 µs (9.7%) and 4.1 µs (6.1%). The line's own work is about 2 µs before, under 1 µs",
  'after (in process, above); the rest of the gap between the two processes moves from run to run and was not traced',
  'to anything the line does. Counted under callgrind',
  '("Instructions per request in the API process"), `GET /me` and `GET /review` differed by −29% and +30% before and by',
  '−2.5% and +2.2% after: the JIT and the garbage collector move whole-process counts by more than the line.',
];

/** Lines per round of the in-process measure, and rounds (interleaved, medians). */
const LINES = 500_000;
const LINE_ROUNDS = 5;

/**
 * ns per request line written in this process to the batched destination on /dev/null: as pino writes it
 * from an object (a child without path redaction, the way the line was written before), and as the
 * middleware writes it now (prebuiltLine, fields pasted in). The same id, method, URL, status and duration.
 */
export function inProcess(): { object: number; prebuilt: number } {
  const fd = openSync('/dev/null', 'w');
  const logger = createLogger('info', batchedDestination(fd));
  const child = logger.child({}, { redact: { paths: [] } });
  const completed = prebuiltLine(logger, 'info', 'request completed');
  const req = { id: 'b3a1c2d4-5e6f-4a1b-9c8d-7e6f5a4b3c2d', method: 'GET', url: '/api/v1/review' };
  const ways = {
    object: (i: number) =>
      child.info(
        { req: { id: req.id, method: req.method, url: redactUrl(req.url) }, res: { statusCode: 200 }, responseTime: i & 7 },
        'request completed',
      ),
    prebuilt: (i: number) =>
      completed(
        `"req":{"id":"${req.id}","method":"${req.method}","url":${JSON.stringify(redactUrl(req.url))}},` +
          `"res":{"statusCode":${200}},"responseTime":${i & 7}`,
      ),
  };
  const runs = { object: [] as number[], prebuilt: [] as number[] };
  for (let round = -1; round < LINE_ROUNDS; round++) {
    for (const way of ['object', 'prebuilt'] as const) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < LINES; i++) ways[way](i);
      if (round >= 0) runs[way].push(Number(process.hrtime.bigint() - started) / LINES);
    }
  }
  logger.flush();
  closeSync(fd);
  return { object: median(runs.object), prebuilt: median(runs.prebuilt) };
}

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
    const lineNs = inProcess();
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
        `- In one process, the same line (id, method, URL, status, duration) to the same batched destination on /dev/null, ` +
          `${LINE_ROUNDS} interleaved rounds of ${fmt(LINES)} lines, medians: written by pino from an object (a child without ` +
          `path redaction, as it was) **${fmt(lineNs.object)} ns**, written by hand (prebuiltLine, as it is) ` +
          `**${fmt(lineNs.prebuilt)} ns** a line; ${fmt(lineNs.object / lineNs.prebuilt, 1)}× less.`,
        '',
        'Target: the line costs a few per cent of a request. The two processes differ by the line alone, yet their',
        "request rates and CPU per request move by more than the line's cost between rounds on this shared machine;",
        'the in-process figure is the steady one.',
        '',
        ...BEFORE,
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    await rm(dir, { recursive: true, force: true });
  }
}
