/**
 * Instructions the API process runs per request, counted under callgrind beside the
 * bare-Express baselines of the request-rate targets, in the same run:
 * - bare Express answering a 304 (If-None-Match), and the floor that makes one Redis call (INCR) first;
 * - the service, started as `npm start` starts it (Node with the tsx loader): the post's 304, `GET /me`
 *   and `GET /review` (8 demo cards, the page from the process's cache);
 * - `GET /me` and `GET /review` again from a second API process at `LOG_LEVEL=warn`, which writes no request
 *   line: the difference is what the access log costs.
 * Request rates on these VMs move by a third between runs of the same code; instruction counts move
 * less (three runs on 2026-11-26: bare Express and the floor within 6%, the service's 304 and `GET /me`
 * within about a sixth, `GET /review` once by a third: the JIT and the garbage collector do not run the
 * same way twice), so a change to the path needs several runs of this too. The counts leave out the
 * kernel's work in system calls, where the floor spends more than the service: it writes to Redis once
 * per request, the service's limiter once per event-loop turn.
 */
import http from 'node:http';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { callgrindMissing, type Counted, underCallgrind } from './callgrind.js';
import { fmt, freePort, NO_RATE_LIMITS, ROOT, answers, seeding, serverEnv } from './lib.js';
import type { BenchContext, Section } from './run.js';

/** Requests before counting (the JIT has settled) and counted, per target; 4 keep-alive connections. */
const WARM = 4000;
const COUNTED = 6000;
const CONNECTIONS = 4;
const SLUG = 'api-instructions-bench';
const PREFIX = '{benchinstr}';

function get(agent: http.Agent, port: number, path: string, headers: Record<string, string>): Promise<{ status: number; etag?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag }));
    });
    req.on('error', reject);
  });
}

/** Starts `args` on this Node under callgrind; resolves once `url` answers (start-up under valgrind takes a minute or two). */
async function start(args: string[], env: Record<string, string>, url: string): Promise<Counted> {
  const server = await underCallgrind(process.execPath, args, { cwd: ROOT, env: serverEnv(env) });
  if (await answers(url, server.child, 300_000)) return server;
  await server.stop();
  throw new Error(`${args.join(' ')} did not start under callgrind`);
}

/** Instructions per request for `path` with `headers`; every answer must have `status`. */
async function perRequest(server: Counted, port: number, path: string, headers: Record<string, string>, status: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const burst = (n: number) =>
    Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let i = 0; i < n / CONNECTIONS; i++) {
          const got = await get(agent, port, path, headers);
          if (got.status !== status) throw new Error(`${path} answered ${got.status}, not ${status}`);
        }
      }),
    );
  try {
    await burst(WARM);
    return await server.measure(() => burst(COUNTED), COUNTED);
  } finally {
    agent.destroy();
  }
}

export async function apiInstructions(ctx: BenchContext): Promise<Section> {
  const title = 'Instructions per request in the API process';
  const missing = callgrindMissing();
  if (missing) return { title, body: missing };
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  const token = await seeding(config, async (db) => {
    const account = await createAccount(db, 'Bench instructions');
    await seedReviewCards(db, account.id);
    const now = Date.now();
    await db('posts').insert({
      id: 'post_bench_instructions',
      account_id: account.id,
      slug: SLUG,
      status: 'published',
      title: 'How freight brokers cut quote time by 80%',
      excerpt: 'Three brokers, one bottleneck, and what they automated first.',
      markdown: `${'Quoting is the bottleneck. '.repeat(60)}`,
      html: `<p>${'Quoting is the bottleneck. '.repeat(60)}</p>`,
      tags: ['freight'],
      author: 'Growth team',
      published_at: now,
      updated_at: now,
      created_at: now,
    });
    const { token } = await mintToken(db, config.tokenPrefix, {
      accountId: account.id,
      label: 'bench',
      scopes: ['review:read', 'content:read'],
    });
    return token;
  });

  const etag = '"bench-etag"';
  const rows: [string, number][] = [];
  for (const [name, kind] of [
    ['bare Express (If-None-Match → 304)', 'etag'],
    ['bare Express + 1 Redis call (INCR) → 304', 'etag-redis'],
  ] as const) {
    const port = await freePort();
    const args = ['--import', 'tsx', 'bench/servers/content-baselines.ts', kind, String(port), etag, config.redisUrl];
    const server = await start(args, {}, `http://127.0.0.1:${port}/`);
    try {
      rows.push([name, await perRequest(server, port, '/p/x', { 'If-None-Match': etag }, 304)]);
    } finally {
      await server.stop();
    }
  }
  rows.push(...(await serviceRows(config, token, 'info')));
  const quiet = await serviceRows(config, token, 'warn');
  const [bare, floor] = [rows[0]![1], rows[1]![1]];
  const line = (i: number) => {
    const [info, warn] = [rows[i + 3]![1], quiet[i]![1]];
    return `${fmt((info - warn) / 1000, 1)}k (${fmt(((info - warn) / info) * 100, 1)}% of the request)`;
  };
  const lines = [
    `Each process under \`valgrind --tool=callgrind\` on Node ${process.versions.node}; ${CONNECTIONS} keep-alive connections, ` +
      `${fmt(WARM)} requests to warm up, then ${fmt(COUNTED)} counted. Instructions of the whole process (JavaScript, JIT, ` +
      'garbage collector, libuv), not the kernel work of its system calls.',
    '',
    '| target | instructions a request | × bare Express | × the floor (bare + 1 Redis call) |',
    '|---|---:|---:|---:|',
    ...[...rows, ...quiet].map(([name, n]) => `| ${name} | ${fmt(n / 1000)}k | ${fmt(n / bare, 2)}× | ${fmt(n / floor, 2)}× |`),
    '',
    `Over the floor, a 304 runs ${fmt((rows[2]![1] - floor) / 1000)}k more instructions and \`GET /review\` ` +
      `${fmt((rows[4]![1] - floor) / 1000)}k: the work the floor does not do and the spec asks of every authenticated ` +
      "call (the token, both buckets and the revocation mark, the route's schema, the response's headers, the request line).",
    'The kernel work of system calls is not in these counts; there the service spends less than the floor (its limiter',
    'writes to Redis once per event-loop turn, the floor once per request).',
    '',
    `The request line (an API process at \`LOG_LEVEL=info\` beside one at \`warn\`, which writes none): \`GET /me\` ${line(0)}, ` +
      `\`GET /review\` ${line(1)}.`,
  ];
  return { title, body: lines.join('\n') };
}

/** The service's rows, from one API process logging at `level`: the post's 304 (at info only), `GET /me`, `GET /review`. */
async function serviceRows(config: ReturnType<typeof configWith>, token: string, level: 'info' | 'warn'): Promise<[string, number][]> {
  const auth = { Authorization: `Bearer ${token}` };
  const rows: [string, number][] = [];
  const port = await freePort();
  const env = {
    DATABASE_URL: config.databaseUrl,
    QUEUE_PREFIX: PREFIX,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: level,
    ...NO_RATE_LIMITS,
  };
  const api = await start(['--import', 'tsx', 'bin/start.ts', 'api'], env, `http://127.0.0.1:${port}/healthz`);
  try {
    const post = `/api/v1/content/posts/${SLUG}`;
    const agent = new http.Agent({ keepAlive: false });
    const current = (await get(agent, port, post, auth)).etag ?? '';
    if (level === 'info') {
      rows.push([
        'GET /api/v1/content/posts/{slug} (If-None-Match → 304)',
        await perRequest(api, port, post, { ...auth, 'If-None-Match': current }, 304),
      ]);
    }
    const quiet = level === 'info' ? '' : ', LOG_LEVEL=warn (no request line)';
    rows.push([`GET /api/v1/me (auth + limiter + handler)${quiet}`, await perRequest(api, port, '/api/v1/me', auth, 200)]);
    rows.push([
      `GET /api/v1/review (auth + limiter + cached queue page)${quiet}`,
      await perRequest(api, port, '/api/v1/review', auth, 200),
    ]);
  } finally {
    await api.stop();
  }
  return rows;
}
