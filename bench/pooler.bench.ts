/**
 * The cost of running behind PgBouncer in transaction pooling with DATABASE_POOLER=transaction, measured
 * in one run beside the same service straight on Postgres: `GET /review` and `GET /me` (the hot reads,
 * whose named statements go unnamed), and the agent round trip (whose account lock becomes a transaction
 * of its own). The PgBouncer is the test suite's (test/helpers/pgbouncer.ts), on loopback.
 *
 *   npm run bench (BENCH_ONLY=pooler)   or   tsx bench/pooler.bench.ts (updates only this section)
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { startPgbouncer, viaPgbouncer } from '../test/helpers/pgbouncer.js';
import { closedLoop, percentile, type Run } from './agent-roundtrip.bench.js';
import {
  compare,
  cpuMultiple,
  fmt,
  freePort,
  median,
  ratioTable,
  ROOT,
  startServer,
  stop,
  type Load,
  type Target,
  NO_RATE_LIMITS,
} from './lib.js';
import type { BenchContext, Section } from './run.js';
import { BENCH_DATABASE, urlFor } from './urls.js';

const UNLIMITED = {
  ...NO_RATE_LIMITS,
};

type Way = 'direct' | 'setting' | 'pooler';
const WAYS: Record<Way, string> = {
  direct: 'straight to Postgres',
  setting: 'straight to Postgres, DATABASE_POOLER=transaction',
  pooler: 'through PgBouncer, DATABASE_POOLER=transaction',
};

export async function poolerCost(ctx: BenchContext): Promise<Section> {
  const clients = Number(process.env.BENCH_POOLER_AGENT_CLIENTS ?? 10);
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 2);
  await migrate(db);
  const reader = await createAccount(db, 'Bench pooler');
  const cards = await seedReviewCards(db, reader.id);
  const { token } = await mintToken(db, config.tokenPrefix, { accountId: reader.id, label: 'bench', scopes: ['review:read'] });
  const agentTokens: Record<'direct' | 'pooler', string[]> = { direct: [], pooler: [] };
  for (const way of ['direct', 'pooler'] as const) {
    for (let i = 0; i < clients; i++) {
      const account = await createAccount(db, `Bench pooler ${way} ${i}`);
      const minted = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['agent:message'] });
      agentTokens[way].push(minted.token);
    }
  }
  await db.destroy();

  // Enough server connections for the pooled API (10) and worker (20): each running turn holds one for its lock.
  // Kept while idle, so a backend's CPU time is not lost to a close between the runs that count it.
  const pgbouncer = await startPgbouncer(urlFor('postgres'), { poolSize: 30, serverIdleSeconds: 3600 });
  const admin = new pg.Client({ connectionString: urlFor('postgres') });
  await admin.connect();
  const database = new URL(config.databaseUrl).pathname.slice(1);
  /** The Postgres backends serving the bench database (each API's own, or PgBouncer's). */
  const backends = async () =>
    (
      await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, [
        database,
      ])
    ).rows.map((r) => r.pid);
  const envOf = (way: Way): Record<string, string> => ({
    DATABASE_URL: way === 'pooler' ? viaPgbouncer(config.databaseUrl, pgbouncer.port) : config.databaseUrl,
    DATABASE_POOLER: way === 'direct' ? 'none' : 'transaction',
    DATABASE_DIRECT_URL: config.databaseUrl,
    LOG_LEVEL: 'warn',
    AGENT_BRAIN: 'offline',
  });
  const ports = { express: await freePort(), direct: await freePort(), setting: await freePort(), pooler: await freePort() };
  const servers: ReturnType<typeof startServer>[] = [];
  try {
    const express = await startServer(
      ['bench/servers/baseline.ts', 'express', String(ports.express)],
      {},
      `http://127.0.0.1:${ports.express}/`,
    );
    servers.push(Promise.resolve(express));
    const api: Partial<Record<Way, Awaited<ReturnType<typeof startServer>>>> = {};
    for (const way of ['direct', 'setting', 'pooler'] as const) {
      const env = { ...envOf(way), ...UNLIMITED, PORT: String(ports[way]), HOST: '127.0.0.1', QUEUE_PREFIX: `{gasbench${way}}` };
      api[way] = await startServer(['bin/start.ts', 'api'], env, `http://127.0.0.1:${ports[way]}/healthz`);
      servers.push(Promise.resolve(api[way]));
    }
    for (const way of ['direct', 'pooler'] as const) {
      const env = { ...envOf(way), QUEUE_PREFIX: `{gasbench${way}}`, AGENT_TURN_CONCURRENCY: String(clients), DATABASE_POOL_MAX: '20' };
      servers.push(startServer(['bin/start.ts', 'workers', '--pools', 'agent-turns'], env, `http://127.0.0.1:${ports[way]}/healthz`));
    }
    await Promise.all(servers);

    // Reads: interleaved rounds, medians (lib.ts compare).
    const auth = { authorization: `Bearer ${token}` };
    const read = (route: 'review' | 'me', way: Way): Target => ({
      name: `GET /api/v1/${route}, ${WAYS[way]}`,
      url: `http://127.0.0.1:${ports[way]}/api/v1/${route}`,
      headers: auth,
      server: api[way],
      // The database side counts too: parsing unnamed statements is Postgres's work, the hop PgBouncer's.
      alsoCpu: async () => [...(await backends()), ...(way === 'pooler' ? [pgbouncer.pid] : [])],
    });
    const targets: Target[] = [
      { name: 'bare Express', url: `http://127.0.0.1:${ports.express}/`, server: express },
      ...(['review', 'me'] as const).flatMap((route) => (['direct', 'setting', 'pooler'] as const).map((way) => read(route, way))),
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const get = (route: 'review' | 'me', way: Way): Load => results.get(read(route, way).name)!;

    // The agent round trip: closed loops, one client (latency) and `clients` clients each its own account.
    const agentClients = (way: 'direct' | 'pooler') => {
      let n = 0;
      return agentTokens[way].map((t) => ({
        url: `http://127.0.0.1:${ports[way]}/api/v1/agent/messages`,
        init: (): RequestInit => ({
          method: 'POST',
          headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: `what is waiting? (${n++})`, waitSeconds: 10 }),
        }),
        ok: (status: number, body: unknown) => status === 200 && (body as { message?: { status?: string } }).message?.status === 'replied',
      }));
    };
    const loops = { direct: agentClients('direct'), pooler: agentClients('pooler') };
    for (const way of ['direct', 'pooler'] as const) await closedLoop(loops[way], 2); // warm-up
    const runs: Record<string, Run[]> = { direct1: [], pooler1: [], directN: [], poolerN: [] };
    for (let i = 0; i < ctx.rounds; i++) {
      for (const way of ['direct', 'pooler'] as const) {
        runs[`${way}1`]!.push(await closedLoop(loops[way].slice(0, 1), ctx.seconds));
        runs[`${way}N`]!.push(await closedLoop(loops[way], ctx.seconds));
      }
    }
    const turns = (rs: Run[]) => ({
      rps: median(rs.map((r) => r.ok / r.seconds)),
      p50: median(rs.map((r) => percentile(r.latencies, 50))),
      p99: median(rs.map((r) => percentile(r.latencies, 99))),
      failed: rs.reduce((a, r) => a + r.failed, 0),
    });
    const agent = Object.fromEntries(Object.entries(runs).map(([k, rs]) => [k, turns(rs)]));
    const ratio = (pooled: number, direct: number) => `${fmt(pooled / direct, 2)}×`;
    const cpuRatio = (r: Load, base: Load) => cpuMultiple(r, base, 2) ?? 'unmeasured';
    const turnRow = (name: string, r: ReturnType<typeof turns>) =>
      `| ${name} | ${fmt(r.rps, 1)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.failed} |`;
    return {
      title: 'Behind PgBouncer (DATABASE_POOLER=transaction)',
      body: [
        `One PgBouncer 1.18 (\`pool_mode = transaction\`, the test suite's, on loopback) in front of the same Postgres. Three API`,
        'processes on one database: straight to Postgres as shipped; straight to Postgres with the setting on (unnamed statements',
        'alone); through PgBouncer with the setting on. Reads: 10 connections, ' +
          `${ctx.rounds} interleaved rounds of ${ctx.seconds} s, medians; the queue holds the ${cards.length} demo cards.`,
        '',
        ...ratioTable(targets, results, 'bare Express'),
        '',
        `Through PgBouncer with the setting, \`GET /review\` serves ${ratio(get('review', 'pooler').rps, get('review', 'direct').rps)} ` +
          `the requests per second of the same route straight to Postgres (p50 ${fmt(get('review', 'direct').p50, 1)} → ` +
          `${fmt(get('review', 'pooler').p50, 1)} ms, CPU per request ${cpuRatio(get('review', 'pooler'), get('review', 'direct'))}), ` +
          `and \`GET /me\` ${ratio(get('me', 'pooler').rps, get('me', 'direct').rps)} (p50 ${fmt(get('me', 'direct').p50, 1)} → ` +
          `${fmt(get('me', 'pooler').p50, 1)} ms, CPU ${cpuRatio(get('me', 'pooler'), get('me', 'direct'))}). The setting alone ` +
          `(unnamed statements, parsed on every call, no PgBouncer): ${ratio(get('review', 'setting').rps, get('review', 'direct').rps)} ` +
          `and ${ratio(get('me', 'setting').rps, get('me', 'direct').rps)} ` +
          `(CPU ${cpuRatio(get('review', 'setting'), get('review', 'direct'))} ` +
          `and ${cpuRatio(get('me', 'setting'), get('me', 'direct'))}).`,
        'Server CPU per request here counts the API process, the Postgres backends serving the database and, through the pooler,',
        "PgBouncer: the whole cost of an answer but Redis's; on a loaded machine it moves far less than requests per second.",
        '',
        `Agent round trip (POST /agent/messages with waitSeconds, offline brain), one API and one \`agent-turns\` worker process each way,`,
        `closed loops, ${ctx.rounds} interleaved rounds of ${ctx.seconds} s, medians. Behind the pooler a drain takes the ` +
          'account lock in a',
        'transaction of its own: three more round trips per drain (docs/decisions/stores.md, "Postgres behind a pooler").',
        '',
        '| target | turns/s | p50 ms | p99 ms | failed |',
        '|---|---:|---:|---:|---:|',
        turnRow('straight to Postgres, 1 client', agent.direct1!),
        turnRow('through PgBouncer, DATABASE_POOLER=transaction, 1 client', agent.pooler1!),
        turnRow(`straight to Postgres, ${clients} clients (one account each)`, agent.directN!),
        turnRow(`through PgBouncer, DATABASE_POOLER=transaction, ${clients} clients`, agent.poolerN!),
        '',
        `Through PgBouncer: ${ratio(agent.poolerN!.rps, agent.directN!.rps)} the turns per second across ${clients} accounts, ` +
          `one client's p50 ${fmt(agent.direct1!.p50, 1)} → ${fmt(agent.pooler1!.p50, 1)} ms.`,
      ].join('\n'),
    };
  } finally {
    await Promise.all((await Promise.allSettled(servers)).flatMap((s) => (s.status === 'fulfilled' ? [stop(s.value)] : [])));
    await pgbouncer.stop();
    await admin.end();
  }
}

/** Run alone: measures, then replaces only this section of docs/performance.md. */
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const ctx: BenchContext = {
    databaseUrl: urlFor(BENCH_DATABASE),
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  };
  const section = await poolerCost(ctx);
  const file = path.join(ROOT, 'docs/performance.md');
  const current = await readFile(file, 'utf8').catch(() => '# Performance\n');
  const heading = `## ${section.title}`;
  const kept = current.split(/^(?=## )/m).filter((p) => !p.startsWith(heading));
  const text = `${kept.join('').trimEnd()}\n\n${heading}\n\n${section.body}\n`;
  await writeFile(file, text);
  process.stdout.write(`${heading}\n\n${section.body}\n`);
  process.exit(0);
}
