/**
 * Content API and Measurement, each beside bare Express (or a bare Postgres insert) in the same run:
 * - `GET /api/v1/content/posts/{slug}` with a matching If-None-Match (304): auth, limiter, the post's ETag;
 * - `GET /l/{code}`: the tracked-link redirect that records a visit (a browser's User-Agent, so not a scanner);
 * - `POST /api/v1/measurement/events` with 100 new events per request, in events per second, against
 *   committed multi-row INSERTs of 100 rows into the same table, 10 at a time.
 */
import pg from 'pg';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { trackedCodes } from '../src/measurement/links.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import {
  compare,
  cpuMultiple,
  fmt,
  freePort,
  median,
  pct,
  ratioTable,
  startServer,
  stop,
  type Load,
  type Target,
  NO_RATE_LIMITS,
} from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchcontent}';
const DESTINATION = 'https://www.example.com/pricing?plan=team';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const LINKS = 200;
const ETAG_FLOOR = 'bare Express + 1 Redis call (INCR) → 304';
const REDIRECT_FLOOR = 'bare Express + 1 committed INSERT of the visit → 302';
const BATCH = 100;

export async function seed(databaseUrl: string, prefix: string) {
  const db = createDb(databaseUrl, 2);
  try {
    await migrate(db);
    const account = await createAccount(db, 'Bench content');
    const now = Date.now();
    await db('posts').insert({
      id: 'post_bench',
      account_id: account.id,
      slug: 'how-freight-brokers-cut-quote-time',
      status: 'published',
      title: 'How freight brokers cut quote time by 80%',
      excerpt: 'Three brokers, one bottleneck, and what they automated first.',
      markdown: `${'Quoting is the bottleneck. '.repeat(60)}\n\n## What to automate first\n\n${'Start with lanes. '.repeat(60)}`,
      html: `<p>${'Quoting is the bottleneck. '.repeat(60)}</p><h2>What to automate first</h2><p>${'Start with lanes. '.repeat(60)}</p>`,
      tags: ['freight', 'automation'],
      author: 'Growth team',
      published_at: now,
      updated_at: now,
      created_at: now,
    });
    const source = { accountId: account.id, channel: 'email', sourceType: 'send' as const, cardId: null, leadId: null };
    const codes: string[] = [];
    for (let i = 0; i < LINKS; i++) {
      const got = await trackedCodes(db, 'http://bench.invalid', { ...source, sourceId: `send_bench${i}` }, [DESTINATION]);
      codes.push(got.get(DESTINATION)!);
    }
    const { token } = await mintToken(db, prefix, {
      accountId: account.id,
      label: 'bench',
      scopes: ['content:read', 'measurement:write'],
    });
    return { accountId: account.id, token, codes };
  } finally {
    await db.destroy();
  }
}

let batchSeq = 0;
function eventsBody(): string {
  const at = Date.now() - 60_000;
  const n = batchSeq++;
  const events = Array.from({ length: BATCH }, (_, i) => ({
    eventId: `bench-${process.pid}-${n}-${i}`,
    name: 'purchase',
    occurredAt: at,
    value: 49.5,
    currency: 'USD',
  }));
  return JSON.stringify({ events });
}

/** Committed multi-row INSERTs of BATCH conversions, 10 at a time for `seconds`: rows per second. */
async function bareInsert(databaseUrl: string, accountId: string, seconds: number): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  let rows = 0;
  let n = 0;
  const until = performance.now() + seconds * 1000;
  const start = performance.now();
  try {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < until) {
          const k = n++;
          const values: unknown[] = [];
          const tuples = Array.from({ length: BATCH }, (_, i) => {
            const b = i * 5;
            values.push(accountId, `bare-${process.pid}-${k}-${i}`, 'purchase', Date.now() - 60_000, 49.5);
            return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, 'USD', $${b + 4})`;
          });
          const res = await pool.query(
            `INSERT INTO conversions (account_id, event_id, name, occurred_at, value, currency, received_at) VALUES ${tuples.join(', ')}
             ON CONFLICT DO NOTHING RETURNING event_id`,
            values,
          );
          rows += res.rowCount ?? 0;
        }
      }),
    );
  } finally {
    await pool.end();
  }
  return (rows * 1000) / (performance.now() - start);
}

export async function contentMeasurement(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  await ensureDatabase(config.databaseUrl);
  const { accountId, token, codes } = await seed(config.databaseUrl, config.tokenPrefix);
  let next = 0;
  const nextLink = () => `/l/${codes[next++ % codes.length]}`;

  const [pEtag, pRedirect, pApi, pEtagRedis, pRedirectInsert] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: config.databaseUrl,
      QUEUE_PREFIX: PREFIX,
      PORT: String(pApi),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${pApi}`,
      LOG_LEVEL: 'info',
      ...NO_RATE_LIMITS,
      // Every click a new visit, as the floor's are: the repeat window off and the door's limits out of the way.
      LINK_REPEAT_WINDOW_SECONDS: '0',
      LINK_CLIENT_VISITS_PER_HOUR: '100000000',
      LINK_CODE_VISITS_PER_HOUR: '100000000',
    },
    `http://127.0.0.1:${pApi}/healthz`,
  );
  const auth = { Authorization: `Bearer ${token}` };
  const postUrl = `http://127.0.0.1:${pApi}/api/v1/content/posts/how-freight-brokers-cut-quote-time`;
  const first = await fetch(postUrl, { headers: auth });
  const etag = first.headers.get('etag');
  if (first.status !== 200 || !etag) throw new Error(`GET post answered ${first.status} without an ETag`);
  const check = await fetch(postUrl, { headers: { ...auth, 'If-None-Match': etag } });
  if (check.status !== 304) throw new Error(`a matching If-None-Match answered ${check.status}, not 304`);
  const servers = [
    await startServer(['bench/servers/content-baselines.ts', 'etag', String(pEtag), etag], {}, `http://127.0.0.1:${pEtag}/`),
    await startServer(
      ['bench/servers/content-baselines.ts', 'redirect', String(pRedirect), DESTINATION],
      {},
      `http://127.0.0.1:${pRedirect}/`,
    ),
    await startServer(
      ['bench/servers/content-baselines.ts', 'etag-redis', String(pEtagRedis), etag, config.redisUrl],
      {},
      `http://127.0.0.1:${pEtagRedis}/`,
    ),
    await startServer(
      ['bench/servers/content-baselines.ts', 'redirect-insert', String(pRedirectInsert), DESTINATION, config.databaseUrl, accountId],
      {},
      `http://127.0.0.1:${pRedirectInsert}/`,
    ),
  ];
  try {
    const etagTargets: Target[] = [
      {
        name: 'bare Express (If-None-Match → 304)',
        url: `http://127.0.0.1:${pEtag}/p/x`,
        headers: { 'If-None-Match': etag },
        server: servers[0],
      },
      {
        name: 'GET /api/v1/content/posts/{slug} (If-None-Match → 304)',
        url: postUrl,
        headers: { ...auth, 'If-None-Match': etag },
        server: api,
      },
      // The floor of every authenticated route: token (remembered) and limiter, no handler work.
      { name: 'GET /api/v1/me (auth + limiter only)', url: `http://127.0.0.1:${pApi}/api/v1/me`, headers: auth, server: api },
      {
        name: ETAG_FLOOR,
        url: `http://127.0.0.1:${pEtagRedis}/p/x`,
        headers: { ...auth, 'If-None-Match': etag },
        server: servers[2],
      },
    ];
    const linkTargets: Target[] = [
      {
        name: 'bare Express (302 redirect)',
        url: `http://127.0.0.1:${pRedirect}/l/x`,
        headers: { 'User-Agent': BROWSER },
        server: servers[1],
      },
      {
        name: 'GET /l/{code} (302, visit recorded)',
        url: `http://127.0.0.1:${pApi}/l/x`,
        headers: { 'User-Agent': BROWSER, 'Accept-Language': 'en-US' },
        nextPath: nextLink,
        server: api,
      },
      {
        name: REDIRECT_FLOOR,
        url: `http://127.0.0.1:${pRedirectInsert}/l/x`,
        headers: { 'User-Agent': BROWSER },
        nextPath: nextLink,
        server: servers[3],
      },
    ];
    const eventsTarget: Target = {
      name: `POST /api/v1/measurement/events (${BATCH} events each)`,
      url: `http://127.0.0.1:${pApi}/api/v1/measurement/events`,
      method: 'POST',
      headers: auth,
      nextBody: eventsBody,
      server: api,
    };
    const etagRuns = await compare(etagTargets, ctx.rounds, ctx.seconds);
    const linkRuns = await compare(linkTargets, ctx.rounds, ctx.seconds);
    // Alternating rounds: the bare insert, then the API, so drift hits both alike.
    const bare: number[] = [];
    const served: Load[] = [];
    await bareInsert(config.databaseUrl, accountId, 1);
    for (let i = 0; i < ctx.rounds; i++) {
      bare.push(await bareInsert(config.databaseUrl, accountId, ctx.seconds));
      served.push((await compare([eventsTarget], 1, ctx.seconds)).get(eventsTarget.name)!);
    }
    const bareEps = median(bare);
    const apiEps = median(served.map((r) => r.rps)) * BATCH;
    const badEvents = served.reduce((a, r) => a + r.errors + r.non2xx, 0);

    const ratio = (runs: Map<string, Load>, t: Target[]) => runs.get(t[1]!.name)!.rps / runs.get(t[0]!.name)!.rps;
    const ofBare = (runs: Map<string, Load>, t: Target[], name: string) => pct(runs.get(name)!.rps / runs.get(t[0]!.name)!.rps);
    const ofFloor = (runs: Map<string, Load>, t: Target[], floor: string) => pct(runs.get(t[1]!.name)!.rps / runs.get(floor)!.rps);
    const times = (runs: Map<string, Load>, t: Target[]) => cpuMultiple(runs.get(t[1]!.name)!, runs.get(t[0]!.name)!) ?? '—';
    return {
      title: 'Content API and Measurement',
      body: [
        `10 connections, ${ctx.rounds} alternating rounds of ${ctx.seconds} s each after a 1 s warm-up; medians of the rounds.`,
        'autocannon counts a 304 and a 302 as "non-2xx": those columns are the answers expected here, not failures.',
        '',
        '### A website revalidating a post (304)',
        '',
        ...ratioTable(etagTargets, etagRuns, etagTargets[0]!.name),
        '',
        `The 304: ${pct(ratio(etagRuns, etagTargets))} of bare Express (target ≥ 50%), ` +
          `${times(etagRuns, etagTargets)} its CPU per request; \`GET /me\`, which does nothing but authenticate and spend from the ` +
          `limiter, is at ${ofBare(etagRuns, etagTargets, etagTargets[2]!.name)} in the same run.`,
        `Bare Express that makes one Redis call before its 304, and nothing else, is at ${ofBare(etagRuns, etagTargets, ETAG_FLOOR)}: ` +
          'the ceiling of any request that asks Redis anything, as the limiter (and the revocation mark it reads) does on every ' +
          `authenticated call. The service's 304 is at ${ofFloor(etagRuns, etagTargets, ETAG_FLOOR)} of it.`,
        '',
        '### A reader following a tracked link (302)',
        '',
        ...ratioTable(linkTargets, linkRuns, linkTargets[0]!.name),
        '',
        `The redirect: ${pct(ratio(linkRuns, linkTargets))} of bare Express (target ≥ 30%), ${times(linkRuns, linkTargets)} its CPU per ` +
          `request; ${LINKS} links in turn, each request a new visit.`,
        `Bare Express that commits one INSERT of the visit before its 302 is at ${ofBare(linkRuns, linkTargets, REDIRECT_FLOOR)}; ` +
          `the service's redirect (which also writes the visit's channel event and group-commits) is at ` +
          `${ofFloor(linkRuns, linkTargets, REDIRECT_FLOOR)} of it.`,
        '',
        '### Conversions, 100 per request',
        '',
        '| target | events/s | of the bare insert |',
        '|---|---:|---:|',
        `| committed multi-row INSERT of ${BATCH} conversions, 10 at a time (pg, no HTTP) | ${fmt(bareEps)} | 100.0% |`,
        `| ${eventsTarget.name} | ${fmt(apiEps)} | ${pct(apiEps / bareEps)} |`,
        '',
        `Requests that failed or were not 200: ${fmt(badEvents)}. Each request: auth, limiter, the body read and checked per event, the ` +
          'audit row, one committed multi-row INSERT … ON CONFLICT DO NOTHING RETURNING, and the aggregation job queued.',
      ].join('\n'),
    };
  } finally {
    await Promise.all([...servers, api].map(stop));
  }
}
