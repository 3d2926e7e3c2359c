/**
 * The public doors under a flood: p50 and p99 of a second account's `GET /api/v1/review` on one API process
 * while a bounded flood (in count and in time, loopback only) hits one of the first account's doors, beside
 * the same measure with no flood, in alternating rounds of the same run:
 * - `GET /l/{code}`: one public link (a published post's), one browser: the first click counts, the rest
 *   are its repeats (one Redis call each, nothing written);
 * - `POST /u/{token}`: the one-click unsubscribe of one real thread: past UNSUBSCRIBE_CLIENT_PER_MINUTE a 429
 *   decided in Redis before anything is read;
 * - `POST /api/mail/inbound/{secret}`: the first account's inbound URL, a small message each (stored, its
 *   parse queued; no worker runs here, so what is measured is the intake beside the other account's reads);
 * - the same with well-formed secrets no account has (1,000 of them in turn): 404s decided by the
 *   live-secrets registry in Redis, no Postgres statement.
 * The door limits are at their defaults; the API's token buckets are out of the way (NO_RATE_LIMITS), so the
 * second account's reads are never refused and what moves is latency.
 */
import http from 'node:http';
import os from 'node:os';
import autocannon from 'autocannon';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb } from '../src/db.js';
import { createInboundUrl } from '../src/inbound/intake.service.js';
import { newReplyToken } from '../src/mail/outbound.js';
import { trackedCodes } from '../src/measurement/links.js';
import { createRedis, keyspace, whenReady } from '../src/redis.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { fmt, freePort, median, NO_RATE_LIMITS, seeding, startServer, stop } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchdoors}';
/** The most requests one flood makes; it also stops when the measured window ends. */
const FLOOD_MAX = Number(process.env.BENCH_FLOOD_MAX ?? 50_000);
const FLOOD_CONNECTIONS = 20;
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

interface Flood {
  name: string;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Paths the flood's connections cycle through instead of `path` alone. */
  paths?: string[];
  /** Requests a second across its connections (an open-loop flood at a stated rate); absent: as fast as answered. */
  rate?: number;
}

interface Run {
  p50: number;
  p99: number;
  rps: number;
  flood?: { sent: number; rps: number; statuses: Record<string, number> };
}

/** Well-formed inbound secrets no account has: each answers 404 from the live-secrets registry in Redis. */
const UNKNOWN_SECRETS = Array.from({ length: 1_000 }, (_, i) => `/api/mail/inbound/inb_${String(i).padStart(40, 'Z')}`);

/** The same small message every time: intake stores each one whole before it answers 202. */
const MESSAGE = [
  'From: Stranger <stranger@outside.example>',
  'To: reply@inbound.example',
  'Subject: one of many',
  'Message-ID: <flood@outside.example>',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Hello, this is one of many.',
  '',
].join('\r\n');

async function seed(databaseUrl: string, baseUrl: string, tokenPrefix: string) {
  const config = configWith({ DATABASE_URL: databaseUrl, QUEUE_PREFIX: PREFIX });
  return seeding(config, async (db, redis) => {
    const first = await createAccount(db, 'Bench doors: flooded');
    const second = await createAccount(db, 'Bench doors: reader');
    await seedReviewCards(db, second.id);
    const { token } = await mintToken(db, tokenPrefix, { accountId: second.id, label: 'bench', scopes: ['review:read'] });
    const post = 'https://flooded.example/blog/launch';
    const codes = await trackedCodes(
      db,
      baseUrl,
      { accountId: first.id, channel: 'seo', sourceType: 'post', sourceId: 'post_bench', cardId: null, leadId: null },
      [post],
    );
    const at = Date.now();
    const replyToken = newReplyToken();
    await db('leads').insert({
      id: 'lead_doors',
      account_id: first.id,
      domain: 'flooded.example',
      status: 'contacted',
      created_at: at,
      updated_at: at,
    });
    await db('mail_threads').insert({
      send_id: 'send_doors',
      account_id: first.id,
      card_id: 'card_doors',
      lead_id: 'lead_doors',
      step: 0,
      reply_token: replyToken,
      message_id: '<mail-send_doors@localhost>',
      to_address: 'jane@flooded.example',
      created_at: at,
    });
    const inbound = await createInboundUrl({ db, redis, config: { ...config, baseUrl } }, first.id);
    return { firstId: first.id, token, code: codes.get(post)!, replyToken, inboundPath: new URL(inbound.url).pathname };
  });
}

/** Rows the first account holds in the tables a flood could grow. */
async function rows(databaseUrl: string, accountId: string): Promise<{ visits: number; events: number; inbound: number }> {
  const db = createDb(databaseUrl, 1);
  try {
    const n = async (table: string) => Number((await db(table).where({ account_id: accountId }).count<{ n: string }[]>({ n: '*' }))[0]!.n);
    return { visits: await n('visits'), events: await n('channel_events'), inbound: await n('inbound_messages') };
  } finally {
    await db.destroy();
  }
}

/** Deletes the bench's own Redis keys (the queued parse jobs, the door counters). */
async function clearRedis(databaseUrl: string): Promise<void> {
  const redis = createRedis(configWith({ DATABASE_URL: databaseUrl, QUEUE_PREFIX: PREFIX }), 'producer');
  try {
    await whenReady(redis);
    for (const pattern of [`${PREFIX}*`, `${keyspace(PREFIX)}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = (await (redis as import('ioredis').Redis).scan(cursor, 'MATCH', pattern, 'COUNT', 1000)) as [string, string[]];
        cursor = next;
        for (const k of keys) await redis.del(k);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}

/** Percentile of sorted values (nearest rank). */
const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/**
 * The second account's reads: 10 kept-alive connections in a loop for `seconds`, each request timed to the
 * microsecond (autocannon rounds latency to whole milliseconds, and the unflooded p50 is under one).
 */
async function read(base: string, token: string, seconds: number): Promise<{ p50: number; p99: number; rps: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const url = new URL(`${base}/api/v1/review`);
  const times: number[] = [];
  const until = performance.now() + seconds * 1000;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const req = http.get(
        { host: url.hostname, port: url.port, path: url.pathname, agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) reject(new Error(`GET /review answered ${res.statusCode}`));
            times.push(performance.now() - started);
            resolve();
          });
        },
      );
      req.on('error', reject);
    });
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < until) await once();
      }),
    );
  } finally {
    agent.destroy();
  }
  const sorted = times.sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), rps: (times.length * 1000) / (performance.now() - started) };
}

async function measure(base: string, token: string, seconds: number, flood: Flood | null): Promise<Run> {
  const flooding = flood
    ? autocannon({
        url: `${base}${flood.path}`,
        method: flood.method,
        headers: flood.headers,
        connections: FLOOD_CONNECTIONS,
        duration: seconds,
        maxOverallRequests: FLOOD_MAX,
        ...(flood.body === undefined ? {} : { body: flood.body }),
        ...(flood.paths ? { requests: flood.paths.map((path) => ({ path })) } : {}),
        ...(flood.rate ? { overallRate: flood.rate } : {}),
        // Its own thread, so the flood's client work does not delay the reader's timing in this one.
        workers: 1,
      })
    : null;
  const [reader, flooded] = await Promise.all([read(base, token, seconds), flooding]);
  const statuses = Object.fromEntries(
    Object.entries(flooded?.statusCodeStats ?? {}).map(([code, s]) => [code, (s as { count: number }).count]),
  );
  return {
    ...reader,
    ...(flooded ? { flood: { sent: flooded.requests.total, rps: flooded.requests.average, statuses } } : {}),
  };
}

export async function doorFlood(ctx: BenchContext): Promise<Section> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const tokenPrefix = configWith({}).tokenPrefix;
  const s = await seed(ctx.databaseUrl, base, tokenPrefix);
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: ctx.databaseUrl,
      QUEUE_PREFIX: PREFIX,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'warn',
      ...NO_RATE_LIMITS,
    },
    `${base}/healthz`,
  );
  const floods: Flood[] = [
    {
      name: 'GET /l/{code} (one public link, one browser)',
      path: `/l/${s.code}`,
      method: 'GET',
      headers: { 'user-agent': BROWSER },
    },
    {
      name: 'POST /u/{token} (one-click, one thread)',
      path: `/u/${s.replyToken}`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    },
    {
      name: 'POST the inbound URL (a small message each)',
      path: s.inboundPath,
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: MESSAGE,
    },
    {
      name: 'POST unknown inbound secrets (well-formed, 1,000 different)',
      path: UNKNOWN_SECRETS[0]!,
      paths: UNKNOWN_SECRETS,
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: MESSAGE,
    },
    {
      // The rate the outside audit flooded at (800–1,280 a second, each a Postgres query then): the cost of the
      // lookup itself, apart from how fast two cores can answer HTTP at all.
      name: 'POST unknown inbound secrets at 1,200/s (the audit’s rate)',
      path: UNKNOWN_SECRETS[0]!,
      paths: UNKNOWN_SECRETS,
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: MESSAGE,
      rate: 1_200,
    },
  ];
  const conditions: (Flood | null)[] = [null, ...floods];
  const runs = new Map<string, Run[]>(conditions.map((c) => [c?.name ?? 'none', []]));
  const grown = new Map<string, { visits: number; events: number; inbound: number }>();
  try {
    await measure(base, s.token, 1, null); // warm-up
    for (let r = 0; r < ctx.rounds; r++) {
      for (const c of conditions) {
        const before = await rows(ctx.databaseUrl, s.firstId);
        runs.get(c?.name ?? 'none')!.push(await measure(base, s.token, ctx.seconds, c));
        const after = await rows(ctx.databaseUrl, s.firstId);
        const g = grown.get(c?.name ?? 'none') ?? { visits: 0, events: 0, inbound: 0 };
        grown.set(c?.name ?? 'none', {
          visits: g.visits + after.visits - before.visits,
          events: g.events + after.events - before.events,
          inbound: g.inbound + after.inbound - before.inbound,
        });
      }
    }
  } finally {
    await stop(api);
    await clearRedis(ctx.databaseUrl);
  }

  const med = (name: string, f: (r: Run) => number) => median(runs.get(name)!.map(f));
  const none = { p50: med('none', (r) => r.p50), p99: med('none', (r) => r.p99), rps: med('none', (r) => r.rps) };
  const lines = conditions.map((c) => {
    const name = c?.name ?? 'none';
    const p50 = med(name, (r) => r.p50);
    const p99 = med(name, (r) => r.p99);
    const rs = runs.get(name)!;
    const statuses: Record<string, number> = {};
    for (const r of rs) for (const [code, n] of Object.entries(r.flood?.statuses ?? {})) statuses[code] = (statuses[code] ?? 0) + n;
    const sent = rs.reduce((a, r) => a + (r.flood?.sent ?? 0), 0);
    const g = grown.get(name)!;
    const answers = Object.entries(statuses)
      .map(([code, n]) => `${fmt(n)}× ${code}`)
      .join(', ');
    return (
      `| ${c ? c.name : 'no flood'} | ${c ? fmt(med(name, (r) => r.flood!.rps)) : '—'} | ${c ? `${fmt(sent)}: ${answers}` : '—'} | ` +
      `${fmt(g.visits)} / ${fmt(g.events)} / ${fmt(g.inbound)} | ${fmt(med(name, (r) => r.rps))} | ${fmt(p50, 2)} | ${fmt(p99, 2)} | ` +
      `${fmt(p50 / none.p50, 2)}× | ${fmt(p99 / none.p99, 2)}× |`
    );
  });
  return {
    title: 'Public doors under a flood',
    body: [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ` +
        `Node ${process.versions.node}, with other work running on the machine. One API process (no workers).`,
      `A second account reads \`GET /api/v1/review\` (10 kept-alive connections in a loop for ${ctx.seconds} s, each request timed to the`,
      `microsecond) while a flood from loopback (autocannon in its own thread, ${FLOOD_CONNECTIONS} connections, ` +
        `at most ${fmt(FLOOD_MAX)} requests`,
      `and ${ctx.seconds} s) hits one door of the first account; ${ctx.rounds} alternating rounds of every condition after a 1 s warm-up,`,
      'medians of the rounds. Door limits at their defaults (LINK_*, UNSUBSCRIBE_CLIENT_PER_MINUTE, INBOUND_URL_PER_MINUTE);',
      'token buckets out of the way. Rows: what the flood added to the first account (visits / channel events /',
      'inbound messages), all rounds.',
      '',
      '| flood | flood req/s | flood requests: answers (all rounds) | rows added | /review req/s | ' +
        '/review p50 ms | /review p99 ms | p50 × no flood | p99 × no flood |',
      '|---|---:|---|---:|---:|---:|---:|---:|---:|',
      ...lines,
      '',
      'The two cores are shared by the flood, the API process, Postgres and Redis, so any flood takes CPU from the reader;',
      'what the doors decide is how much each flooding request costs: a repeat click or a refused one-click is one Redis',
      "call and no Postgres write, and so is an inbound message past its URL's minute (an accepted one is a stored row",
      'and a queued job). An unknown inbound secret is one Redis call (the registry of live secrets) and no Postgres',
      'statement, whatever the secret.',
    ].join('\n'),
  };
}
