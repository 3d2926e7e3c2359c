/**
 * What Prometheus metrics and OpenTelemetry traces cost: three API processes started alike but for
 * METRICS_PORT (one serving /metrics, timing every request by route and sampling the queues) and
 * OTEL_EXPORTER_OTLP_ENDPOINT (one exporting a span per request, and the webhook jobs' add spans, to a
 * sink in this process that takes the POSTs and drops them), and one with both off, all serving the
 * cached `GET /review` and accepted webhook deliveries, in the same run. The webhook-events jobs the
 * deliveries queue are left in Redis (no worker runs), under a prefix of this benchmark's own.
 */
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { createHook } from '../src/webhooks/webhooks.service.js';
import { compare, dropPrefix, fmt, freePort, NO_RATE_LIMITS, pct, ratioTable, seeding, startServer, stop, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchmetrics}';
const PAYLOAD = JSON.stringify({ event: 'signup', email: 'ada@example.com', plan: 'trial', company: { domain: 'example.com', seats: 12 } });
const REVIEW = 'GET /api/v1/review (cached page)';
const HOOK = 'POST /api/webhook/hook/whk_… (accepted)';
type Mode = 'off' | 'metrics' | 'tracing';
const name = (what: string, mode: Mode) => `${what}, ${mode === 'off' ? 'metrics and tracing off' : `${mode} on`}`;

/** An OTLP/HTTP endpoint that answers every POST and keeps nothing; counts the spans' bytes it was sent. */
async function otlpSink(port: number) {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (d: Buffer) => (bytes += d.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { bytes: () => bytes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export async function metricsCost(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  const [pOn, pOff, pMetrics, pTraced, pSink] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
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
  const api = (port: number, mode: Mode) =>
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
        ...(mode === 'metrics' ? { METRICS_PORT: String(pMetrics), METRICS_SAMPLE_SECONDS: '15' } : {}),
        ...(mode === 'tracing' ? { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${pSink}` } : {}),
      },
      `http://127.0.0.1:${port}/healthz`,
    );
  const sink = await otlpSink(pSink);
  const servers = [await api(pOn, 'metrics'), await api(pOff, 'off'), await api(pTraced, 'tracing')];
  try {
    const auth = { authorization: `Bearer ${token}` };
    const post = { method: 'POST' as const, body: PAYLOAD, headers: { 'content-type': 'application/json' } };
    const at = { off: [pOff, servers[1]], metrics: [pOn, servers[0]], tracing: [pTraced, servers[2]] } as const;
    const modes: Mode[] = ['off', 'metrics', 'tracing'];
    const targets: Target[] = [
      ...modes.map((m) => ({ name: name(REVIEW, m), url: `http://127.0.0.1:${at[m][0]}/api/v1/review`, headers: auth, server: at[m][1] })),
      ...modes.map((m) => ({ name: name(HOOK, m), url: `http://127.0.0.1:${at[m][0]}${hookPath}`, ...post, server: at[m][1] })),
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const scraped = await (await fetch(`http://127.0.0.1:${pMetrics}/metrics`)).text();
    const series = scraped.split('\n').filter((l) => l.startsWith('gas_http_request_duration_seconds_count')).length;
    const cost = (what: string, mode: Mode) => {
      const [on, off] = [results.get(name(what, mode))!, results.get(name(what, 'off'))!];
      const cpu =
        on.cpuUs !== undefined && off.cpuUs !== undefined
          ? `; CPU per request ${fmt(on.cpuUs, 1)} µs against ${fmt(off.cpuUs, 1)} µs (${pct((on.cpuUs - off.cpuUs) / off.cpuUs)})`
          : '';
      return `\`${what}\`: with ${mode} on it serves ${pct(on.rps / off.rps)} of its rate with both off${cpu}.`;
    };
    return {
      title: 'The cost of metrics and traces',
      body: [
        `10 connections, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s each; medians of the rounds. Three API processes`,
        'started alike but for `METRICS_PORT` and `OTEL_EXPORTER_OTLP_ENDPOINT`: with metrics on, every request is timed by',
        'route template and status and the queues are sampled every 15 s; with tracing on, every request is a span (and each',
        'webhook job add another), batched and POSTed as OTLP/HTTP JSON to a sink that drops them; with both off, neither.',
        `The review queue holds the ${cards.length} demo cards; each webhook POST is an accepted delivery (logged, its job queued).`,
        '',
        ...ratioTable(targets, results, name(REVIEW, 'off')),
        '',
        '(The table\'s "of bare Express" columns are relative to `GET /review` with both off here.)',
        '',
        ...modes.slice(1).flatMap((m) => [`- ${cost(REVIEW, m)}`, `- ${cost(HOOK, m)}`]),
        `- The process with metrics on had ${series} request-duration series after the run (one per route, method and status).`,
        `- The tracing process sent the sink ${fmt(sink.bytes() / 1024 / 1024, 1)} MB of spans.`,
        '',
        'Target: metrics cost under 5% of throughput. These machines move a rate by more than that between rounds; the CPU',
        'per request is the steadier figure.',
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
    await sink.close();
    await dropPrefix(config.redisUrl, PREFIX);
  }
}
