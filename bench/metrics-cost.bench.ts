/**
 * What Prometheus metrics cost: two API processes started alike but for METRICS_PORT (one serving
 * /metrics, timing every request by route and sampling the queues; one with metrics off), both serving
 * the cached `GET /review` and accepted webhook deliveries, in the same run. The webhook-events jobs the
 * deliveries queue are left in Redis (no worker runs), under a prefix of this benchmark's own.
 */
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../src/config.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { createHook } from '../src/webhooks/webhooks.service.js';
import { compare, fmt, freePort, NO_RATE_LIMITS, pct, ratioTable, seeding, startServer, stop, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchmetrics}';
const PAYLOAD = JSON.stringify({ event: 'signup', email: 'ada@example.com', plan: 'trial', company: { domain: 'example.com', seats: 12 } });
const REVIEW = 'GET /api/v1/review (cached page)';
const HOOK = 'POST /api/webhook/hook/whk_… (accepted)';
const name = (what: string, on: boolean) => `${what}, metrics ${on ? 'on' : 'off'}`;

export async function metricsCost(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  const [pOn, pOff, pMetrics] = await Promise.all([freePort(), freePort(), freePort()]);
  const { token, hookPath, cards } = await seeding(config, async (db) => {
    const account = await createAccount(db, 'Bench metrics');
    const cards = await seedReviewCards(db, account.id);
    const { token } = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:read'] });
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
    const hook = await createHook({ config, db, redis }, `http://127.0.0.1:${pOn}`, { accountId: account.id, label: 'bench' }).finally(() =>
      redis.disconnect(),
    );
    return { token, hookPath: new URL(hook.url).pathname, cards };
  });
  const api = (port: number, metrics: boolean) =>
    startServer(
      ['bin/start.ts', 'api'],
      {
        DATABASE_URL: config.databaseUrl,
        QUEUE_PREFIX: PREFIX,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        WEBHOOK_HOOK_PER_HOUR: '100000000',
        WEBHOOK_ACCOUNT_PER_HOUR: '100000000',
        ...NO_RATE_LIMITS,
        ...(metrics ? { METRICS_PORT: String(pMetrics), METRICS_SAMPLE_SECONDS: '15' } : {}),
      },
      `http://127.0.0.1:${port}/healthz`,
    );
  const servers = [await api(pOn, true), await api(pOff, false)];
  try {
    const auth = { authorization: `Bearer ${token}` };
    const post = { method: 'POST' as const, body: PAYLOAD, headers: { 'content-type': 'application/json' } };
    const targets: Target[] = [
      { name: name(REVIEW, false), url: `http://127.0.0.1:${pOff}/api/v1/review`, headers: auth, server: servers[1] },
      { name: name(REVIEW, true), url: `http://127.0.0.1:${pOn}/api/v1/review`, headers: auth, server: servers[0] },
      { name: name(HOOK, false), url: `http://127.0.0.1:${pOff}${hookPath}`, ...post, server: servers[1] },
      { name: name(HOOK, true), url: `http://127.0.0.1:${pOn}${hookPath}`, ...post, server: servers[0] },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const scraped = await (await fetch(`http://127.0.0.1:${pMetrics}/metrics`)).text();
    const series = scraped.split('\n').filter((l) => l.startsWith('gas_http_request_duration_seconds_count')).length;
    const cost = (what: string) => {
      const [on, off] = [results.get(name(what, true))!, results.get(name(what, false))!];
      const cpu =
        on.cpuUs !== undefined && off.cpuUs !== undefined
          ? `; CPU per request ${fmt(on.cpuUs, 1)} µs against ${fmt(off.cpuUs, 1)} µs (${pct((on.cpuUs - off.cpuUs) / off.cpuUs)})`
          : '';
      return `\`${what}\`: with metrics on it serves ${pct(on.rps / off.rps)} of its rate with metrics off${cpu}.`;
    };
    return {
      title: 'The cost of metrics',
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. Two API processes`,
        'started alike but for `METRICS_PORT`: on, every request is timed by route template and status and the queues are',
        'sampled every 15 s; off, neither. The review queue holds the ' +
          `${cards.length} demo cards; each webhook POST is an accepted delivery (logged, its job queued).`,
        '',
        ...ratioTable(targets, results, name(REVIEW, false)),
        '',
        '(The table\'s "of bare Express" columns are relative to `GET /review` with metrics off here.)',
        '',
        `- ${cost(REVIEW)}`,
        `- ${cost(HOOK)}`,
        `- The process with metrics on had ${series} request-duration series after the run (one per route, method and status).`,
        '',
        'Target: metrics cost under 5% of throughput. These machines move a rate by more than that between rounds; the CPU',
        'per request is the steadier figure.',
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
  }
}
