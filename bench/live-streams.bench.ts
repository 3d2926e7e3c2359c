import { type ClientRequest, request } from 'node:http';
import { createAccount } from '../src/accounts/accounts.service.js';
import { adminActor } from '../src/audit/audit.service.js';
import { createDb } from '../src/db.js';
import { newId } from '../src/ids.js';
import { createPerson } from '../src/people/people.service.js';
import { registerCardWrites } from '../src/queue-version/card-writes.js';
import { createRedis, keyspace, whenReady } from '../src/redis.js';
import { cardsRepository } from '../src/review/cards/cards.repository.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { configWith } from '../test/helpers/config.js';
import { fmt, freePort, load, median, NO_RATE_LIMITS, seeding, startServer, stop } from './lib.js';
import type { BenchContext, Section } from './run.js';

const STREAMS = Number(process.env.BENCH_LIVE_STREAMS ?? 500);
/** Cards filed a second in the streamed account while the reads run, in both phases, so the open streams carry events. */
const CARDS_PER_SECOND = 4;
const PASSWORD = 'correct horse battery staple';

/**
 * `GET /api/v1/review` of one account under load, with no live stream open and with STREAMS open live streams
 * (`GET /dashboard/api/review/stream`) of another account of the same API process, in interleaved rounds of
 * the same run; in both phases a writer files CARDS_PER_SECOND cards a second in the streamed account, so each
 * open stream gets every event. The p99 with the streams against the p99 without is the figure.
 */
export async function liveStreams(ctx: BenchContext): Promise<Section> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, BASE_URL: baseUrl });
  const email = `bench-${newId('p').slice(2).toLowerCase()}@example.com`;
  const { token, streamedAccount } = await seeding(config, async (db) => {
    const reader = await createAccount(db, 'Live bench reader');
    await seedReviewCards(db, reader.id);
    const { token } = await mintToken(db, config.tokenPrefix, { accountId: reader.id, label: 'bench', scopes: ['review:read'] });
    const streamed = await createAccount(db, 'Live bench streamed');
    await createPerson({ config, db }, adminActor(streamed.id, 'person create'), {
      accountId: streamed.id,
      email,
      name: 'Bench Person',
      role: 'owner',
      password: PASSWORD,
    });
    return { token, streamedAccount: streamed.id };
  });
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: config.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: baseUrl,
      LOG_LEVEL: 'warn',
      LIVE_STREAMS_PER_SESSION: String(STREAMS * 2),
      LIVE_STREAMS_PER_ACCOUNT: String(STREAMS * 2),
      ...NO_RATE_LIMITS,
    },
    `${baseUrl}/healthz`,
  );
  const db = createDb(config.databaseUrl, 2);
  const redis = createRedis(config, 'producer');
  registerCardWrites(db, { redis, keyspace: keyspace(config.queuePrefix) });
  await whenReady(redis);
  let writer: NodeJS.Timeout | null = null;
  try {
    const signIn = await fetch(`${baseUrl}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: baseUrl },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}`);
    const cookie = signIn.headers
      .getSetCookie()
      .find((c) => c.startsWith('gas_session='))!
      .split(';')[0]!;

    let received = 0;
    const open = async (n: number): Promise<ClientRequest[]> => {
      const streams: ClientRequest[] = [];
      for (let i = 0; i < n; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, n - i) }, () => {
            return new Promise<void>((resolve, reject) => {
              const req = request(`${baseUrl}/dashboard/api/review/stream`, { headers: { cookie } }, (res) => {
                if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
                res.setEncoding('utf8');
                res.on('data', (chunk: string) => {
                  if (chunk.includes('event: ready')) resolve();
                  received += chunk.split('event: card.').length - 1;
                });
                res.on('error', () => {});
              });
              req.on('error', () => {});
              req.end();
              streams.push(req);
            });
          }),
        );
      }
      return streams;
    };

    writer = setInterval(() => {
      void cardsRepository(db)
        .insert({
          id: newId('card'),
          accountId: streamedAccount,
          kind: 'approval',
          sourceType: 'agent_approval',
          title: 'Go ahead?',
          payload: {},
          actions: [],
          primaryLabel: '',
          ladderChecked: true,
        })
        .catch(() => {});
    }, 1000 / CARDS_PER_SECOND);

    const target = {
      name: 'GET /api/v1/review',
      url: `${baseUrl}/api/v1/review`,
      headers: { authorization: `Bearer ${token}` },
      server: api,
    };
    await load(target, 2);
    const none: number[] = [];
    const withStreams: number[] = [];
    const rpsNone: number[] = [];
    const rpsWith: number[] = [];
    let delivered = 0;
    for (let round = 0; round < ctx.rounds; round++) {
      const a = await load(target, ctx.seconds);
      none.push(a.p99);
      rpsNone.push(a.rps);
      const streams = await open(STREAMS);
      received = 0;
      const b = await load(target, ctx.seconds);
      delivered = Math.max(delivered, received);
      withStreams.push(b.p99);
      rpsWith.push(b.rps);
      for (const s of streams) s.destroy();
    }
    const ratio = median(withStreams) / median(none);
    return {
      title: `${STREAMS} open live review streams beside GET /api/v1/review`,
      body: [
        `\`GET /api/v1/review\` of one account (10 connections, ${ctx.seconds} s a run) with no live stream open and with ${STREAMS} ` +
          `open \`GET /dashboard/api/review/stream\` streams of another account on the same API process, ${ctx.rounds} interleaved ` +
          `rounds, medians. In both phases a writer files ${CARDS_PER_SECOND} cards a second in the streamed account, so every ` +
          `open stream gets every event (${delivered.toLocaleString('en-US')} events reached the streams in the busiest run).`,
        '',
        '| phase | p99 ms (median) | requests a second (median) |',
        '|---|---:|---:|',
        `| no live stream | ${fmt(median(none), 1)} | ${fmt(median(rpsNone))} |`,
        `| ${STREAMS} live streams | ${fmt(median(withStreams), 1)} | ${fmt(median(rpsWith))} |`,
        '',
        `With ${STREAMS} streams open the p99 is ${fmt(ratio, 2)}× the p99 without (target: at most 1.5×).`,
      ].join('\n'),
    };
  } finally {
    if (writer) clearInterval(writer);
    redis.disconnect();
    await db.destroy();
    await stop(api);
  }
}
