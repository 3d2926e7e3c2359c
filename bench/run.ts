/**
 * `npm run bench`: runs every benchmark against real servers on this machine, each beside its
 * baselines measured in the same run, and writes its section into its topic's page,
 * docs/performance/<page>.md (bench/pages.ts), and the index docs/performance.md. Never part of `npm test`.
 *   BENCH_ONLY=name,name  run some (only their pages change);  BENCH_SECONDS / BENCH_ROUNDS  change the length;
 *   BENCH_DATABASE  the scratch database (default growth_agent_bench), so two runs can share a server;
 *   BENCH_OUT  the index written (default docs/performance.md; its pages go in the folder of its name),
 *   e.g. a run on another runtime kept beside it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DATABASE, freshDatabase, urlFor } from './urls.js';
import { accessLog } from './access-log.bench.js';
import { agentRoundTrip } from './agent-roundtrip.bench.js';
import { apiInstructions } from './api-instructions.bench.js';
import { bigAccount } from './big-account.bench.js';
import { metricsCost } from './metrics-cost.bench.js';
import { contentMeasurement } from './content-measurement.bench.js';
import { dashboard } from './dashboard.bench.js';
import { dashboardDesk } from './dashboard-desk.bench.js';
import { doorFlood } from './door-flood.bench.js';
import { experimentsSimulation } from './experiments.bench.js';
import { experimentsPath } from './experiments-path.bench.js';
import { httpRead } from './http-read.bench.js';
import { inboundParse } from './inbound-parse.bench.js';
import { leadsImport } from './leads-import.bench.js';
import { leadsPaging } from './leads-paging.bench.js';
import { limiterRedis } from './limiter-redis.bench.js';
import { liveStreams } from './live-streams.bench.js';
import { mailSend } from './mail-send.bench.js';
import { mailWorker } from './mail-worker.bench.js';
import { networkShip } from './network-ship.bench.js';
import { oneClick } from './one-click.bench.js';
import { poolerCost } from './pooler.bench.js';
import { retention } from './retention.bench.js';
import { postfixSend } from './postfix-send.bench.js';
import { roundTrips } from './round-trips.bench.js';
import { smtpRcpt } from './smtp-rcpt.bench.js';
import { storeCeilings } from './store-ceilings.bench.js';
import { webhook404 } from './webhook-404.bench.js';
import { webhookIntake } from './webhook-intake.bench.js';
import { webhookWorker } from './webhook-worker.bench.js';
import { ROOT } from './lib.js';
import { indexText, mergeSections, PAGES, pageOf, pagePath, pagesDir, pageText, previousSections, type Section } from './pages.js';

export interface BenchContext {
  databaseUrl: string;
  seconds: number;
  rounds: number;
}

export type { Section } from './pages.js';

const BENCHMARKS: Record<string, (ctx: BenchContext) => Promise<Section>> = {
  'store-ceilings': storeCeilings,
  'http-read': httpRead,
  'access-log': accessLog,
  'metrics-cost': metricsCost,
  'leads-paging': leadsPaging,
  'leads-import': leadsImport,
  'live-streams': liveStreams,
  'agent-roundtrip': agentRoundTrip,
  'webhook-intake': webhookIntake,
  'webhook-404': webhook404,
  'webhook-worker': webhookWorker,
  'mail-send': mailSend,
  'mail-worker': mailWorker,
  'postfix-send': postfixSend,
  'one-click': oneClick,
  'inbound-parse': inboundParse,
  'smtp-rcpt': smtpRcpt,
  'content-measurement': contentMeasurement,
  'door-flood': doorFlood,
  'network-ship': networkShip,
  'round-trips': roundTrips,
  'limiter-redis': limiterRedis,
  'api-instructions': apiInstructions,
  pooler: poolerCost,
  experiments: experimentsSimulation,
  'experiments-path': experimentsPath,
  'big-account': bigAccount,
  retention,
  dashboard,
  'dashboard-desk': dashboardDesk,
};

const OUT = path.resolve(ROOT, process.env.BENCH_OUT ?? 'docs/performance.md');

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
  const ctx: BenchContext = {
    databaseUrl: urlFor(BENCH_DATABASE),
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  };
  await freshDatabase(BENCH_DATABASE);
  // Every benchmark has its page before any runs (a new one without a page fails here, not after an hour).
  for (const name of Object.keys(BENCHMARKS)) pageOf(name);
  const measured: { bench: string; section: Section }[] = [];
  for (const [name, bench] of Object.entries(BENCHMARKS)) {
    if (only && !only.includes(name)) continue;
    process.stderr.write(`bench ${name}…\n`);
    measured.push({ bench: name, section: await bench(ctx) });
  }
  const machine =
    `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ` +
    `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}. Load generator (autocannon) and servers ` +
    'share the machine.';
  await mkdir(pagesDir(OUT), { recursive: true });
  const pages = [];
  for (const page of PAGES) {
    const file = pagePath(OUT, page);
    const earlier = await readFile(file, 'utf8').catch(() => '');
    const kept = only ? previousSections(earlier) : [];
    const mine = measured.filter((m) => pageOf(m.bench) === page).map((m) => m.section);
    // A partial run (BENCH_ONLY) rewrites only the pages of what it ran; there, its sections replace their earlier text.
    const sections = mine.length ? mergeSections(kept, mine) : previousSections(earlier);
    if (mine.length) await writeFile(file, pageText(page, machine, sections));
    pages.push({ page, titles: sections.map((s) => s.title) });
  }
  const text = indexText(OUT, pages);
  await writeFile(OUT, text);
  process.stdout.write(text);
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
