/**
 * The process entry: `all` (API and every pool), `api`, `workers [--pools a,b]`, or `migrate`.
 * Each role checks Postgres and Redis, creates the database if needed and migrates before it starts.
 */
import { parseArgs } from 'node:util';
import { startApi, type ApiServer } from '../api/server.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { createLogger } from '../src/logger.js';
import { preflight } from '../src/preflight.js';
import { createDeps } from '../src/deps.js';
import { checkPoolConfig, parsePools, startPools, type Pools } from '../workers/main.js';

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { pools: { type: 'string' } } });
  const role = positionals[0] ?? 'all';
  if (!['all', 'api', 'workers', 'migrate'].includes(role)) fail(`unknown role ${role}; use all, api, workers or migrate`);

  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration: ${err.problems.join('; ')}`);
    throw err;
  }
  let pools: ReturnType<typeof parsePools> = [];
  try {
    pools = role === 'workers' || role === 'all' ? parsePools(values.pools) : [];
    checkPoolConfig(config, pools);
  } catch (err) {
    fail((err as Error).message);
  }
  const logger = createLogger(config.logLevel);

  const problems = await preflight(config);
  if (problems.length) fail(problems.join('\n'));

  if (await ensureDatabase(config.databaseUrl)) logger.info('created database');
  const db = createDb(config.databaseUrl, 2);
  const applied = await migrate(db);
  await db.destroy();
  if (applied.length) logger.info({ applied }, 'migrations applied');
  if (role === 'migrate') return;

  const rt = createDeps(config, logger);
  let api: ApiServer | null = null;
  let workers: Pools | null = null;
  if (role === 'all' || role === 'api') api = await startApi(rt);
  if (role === 'all' || role === 'workers') workers = await startPools(rt, pools);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    const force = setTimeout(() => {
      logger.error('shutdown grace period over; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    force.unref();
    await Promise.all([api?.close(), workers?.close()]);
    await rt.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`${JSON.stringify({ error: 'start failed', message: (err as Error).message })}\n`);
  process.exit(1);
});
