/**
 * Round trip of `POST /api/v1/agent/messages` with `waitSeconds` and the offline brain, through a real
 * API process and a real `agent-turns` worker process, beside bare Express measured in the same run.
 * Each simulated client is its own account (one turn per account at a time), sending back to back.
 *
 *   npm run bench (BENCH_ONLY=agent-roundtrip)   or   tsx bench/agent-roundtrip.bench.ts (updates only this section)
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { fmt, freePort, median, ROOT, startServer, stop, NO_RATE_LIMITS } from './lib.js';
import type { BenchContext, Section } from './run.js';
import { BENCH_DATABASE, urlFor } from './urls.js';

export interface Run {
  ok: number;
  failed: number;
  latencies: number[];
  seconds: number;
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** `clients` loops, each sending its next request when the last one answered, for `seconds`. */
export async function closedLoop(
  clients: { url: string; init: () => RequestInit; ok: (status: number, body: unknown) => boolean }[],
  seconds: number,
): Promise<Run> {
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          const res = await fetch(c.url, c.init());
          const body: unknown = await res.json();
          if (c.ok(res.status, body)) {
            ok++;
            latencies.push(performance.now() - t);
          } else {
            if (!failed) process.stderr.write(`first failure: ${res.status} ${JSON.stringify(body).slice(0, 300)}\n`);
            failed++;
          }
        } catch (err) {
          if (!failed) process.stderr.write(`first failure: ${(err as Error).message}\n`);
          failed++;
        }
      }
    }),
  );
  return { ok, failed, latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
}

export async function agentRoundTrip(ctx: BenchContext): Promise<Section> {
  const clients = Number(process.env.BENCH_AGENT_CLIENTS ?? 20);
  // One running turn per account at a time, each holding one connection of the worker's pool (40).
  const turnConcurrency = Math.min(clients, 32);
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: '{gasbench}' });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  await migrate(db);
  const tokens: string[] = [];
  for (let i = 0; i < clients; i++) {
    const account = await createAccount(db, `Bench agent ${i}`);
    tokens.push((await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['agent:message'] })).token);
  }
  await db.destroy();

  const [pExpress, pApi] = await Promise.all([freePort(), freePort()]);
  // BENCH_CPU_PROF=dir: the API and the worker write V8 CPU profiles there when they stop.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const common = { DATABASE_URL: config.databaseUrl, QUEUE_PREFIX: config.queuePrefix, LOG_LEVEL: 'warn', AGENT_BRAIN: 'offline' };
  const unlimited = {
    ...NO_RATE_LIMITS,
  };
  const servers = [
    await startServer(['bench/servers/baseline.ts', 'express', String(pExpress)], {}, `http://127.0.0.1:${pExpress}/`),
    await startServer(
      [...profile, 'bin/start.ts', 'api'],
      { ...common, ...unlimited, PORT: String(pApi), HOST: '127.0.0.1', DATABASE_POOL_MAX: '20' },
      `http://127.0.0.1:${pApi}/healthz`,
    ),
    // The worker answers no HTTP; it is up once the API is (both migrate the same database first).
    await startServer(
      [...profile, 'bin/start.ts', 'workers', '--pools', 'agent-turns'],
      { ...common, AGENT_TURN_CONCURRENCY: String(turnConcurrency), DATABASE_POOL_MAX: '40' },
      `http://127.0.0.1:${pApi}/healthz`,
    ),
  ];
  try {
    let n = 0;
    const agentClients = tokens.map((token) => ({
      url: `http://127.0.0.1:${pApi}/api/v1/agent/messages`,
      init: (): RequestInit => ({
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: `what is waiting? (${n++})`, waitSeconds: 10 }),
      }),
      ok: (status: number, body: unknown) => status === 200 && (body as { message?: { status?: string } }).message?.status === 'replied',
    }));
    const expressClients = tokens.map(() => ({ url: `http://127.0.0.1:${pExpress}/`, init: () => ({}), ok: (s: number) => s === 200 }));
    await closedLoop(agentClients, 2); // warm-up: connections, prepared plans, JIT
    await closedLoop(expressClients, 1);
    // Latency: one client, so a round trip is measured without queueing behind other clients.
    // Throughput: every client at once (one account each).
    const runs = { agent1: [] as Run[], bare1: [] as Run[], agentN: [] as Run[], bareN: [] as Run[] };
    for (let i = 0; i < ctx.rounds; i++) {
      runs.bare1.push(await closedLoop(expressClients.slice(0, 1), ctx.seconds));
      runs.agent1.push(await closedLoop(agentClients.slice(0, 1), ctx.seconds));
      runs.bareN.push(await closedLoop(expressClients, ctx.seconds));
      runs.agentN.push(await closedLoop(agentClients, ctx.seconds));
    }
    const summary = (rs: Run[]) => ({
      rps: median(rs.map((r) => r.ok / r.seconds)),
      p50: median(rs.map((r) => percentile(r.latencies, 50))),
      p99: median(rs.map((r) => percentile(r.latencies, 99))),
      failed: rs.reduce((a, r) => a + r.failed, 0),
      total: rs.reduce((a, r) => a + r.ok, 0),
    });
    const a1 = summary(runs.agent1);
    const b1 = summary(runs.bare1);
    const aN = summary(runs.agentN);
    const bN = summary(runs.bareN);
    const verdict = (ok: boolean) => (ok ? 'met' : 'not met');
    const row = (name: string, unit: string, r: ReturnType<typeof summary>) =>
      `| ${name} | ${fmt(r.rps)} ${unit} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.total} | ${r.failed} |`;
    return {
      title: 'Agent round trip (POST /agent/messages with waitSeconds, offline brain)',
      body: [
        `Closed loop: each client sends its next request when the last one answered. ${ctx.rounds} interleaved rounds of ${ctx.seconds} s;`,
        `medians of the rounds. One API process and one \`agent-turns\` worker process (concurrency ${turnConcurrency}), Postgres and`,
        'Redis on this machine, all sharing it with the load generator. A round trip is: auth, limiter, write the turn, ' +
          'enqueue, the worker',
        'takes the account lock and runs the turn (offline brain, two reply bubbles), the Redis notice carries the finished message → 200.',
        'Nine SQL statements in seven round trips, two of them synchronous commits (docs/agent.md).',
        '',
        '| target | per second | p50 ms | p99 ms | answered | failed |',
        '|---|---:|---:|---:|---:|---:|',
        row('bare Express (GET /), 1 client', 'req', b1),
        row('POST /agent/messages → 200 replied, 1 client', 'turns', a1),
        row(`bare Express (GET /), ${clients} clients`, 'req', bN),
        row(`POST /agent/messages → 200 replied, ${clients} clients (one account each)`, 'turns', aN),
        '',
        `Targets: p50 ≤ 15 ms (${verdict(a1.p50 <= 15)}: ${fmt(a1.p50, 1)}), p99 ≤ 50 ms ` +
          `(${verdict(a1.p99 <= 50)}: ${fmt(a1.p99, 1)}), ` +
          `≥ 200 turns/s across many accounts (${verdict(aN.rps >= 200)}: ${fmt(aN.rps)}). ` +
          `Turns per second across ${clients} accounts are ${fmt((aN.rps / bN.rps) * 100, 1)}% of bare Express requests per ` +
          `second in the same run.`,
      ].join('\n'),
    };
  } finally {
    await Promise.all(servers.map(stop));
  }
}

/** Run alone: measures, then replaces only this section of docs/performance.md. */
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const ctx: BenchContext = {
    databaseUrl: urlFor(BENCH_DATABASE),
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  };
  const section = await agentRoundTrip(ctx);
  const file = path.join(ROOT, 'docs/performance.md');
  const current = await readFile(file, 'utf8').catch(() => '# Performance\n');
  const heading = `## ${section.title}`;
  const parts = current.split(/^(?=## )/m);
  const kept = parts.filter((p) => !p.startsWith(heading));
  const text = `${kept.join('').trimEnd()}\n\n${heading}\n\n${section.body}\n`;
  await writeFile(file, text);
  process.stdout.write(`${heading}\n\n${section.body}\n`);
  process.exit(0);
}
