/**
 * The process entry: `all` (API, every pool and, unless INBOUND_SMTP_PORT is 0, the inbound SMTP listener),
 * `api`, `workers [--pools a,b]`, `inbound-mail` (the inbound SMTP listener alone), or `migrate`.
 * Each role checks Postgres and Redis, creates the database if needed and migrates before it starts.
 */
import { parseArgs } from 'node:util';
import { startApi, type ApiServer } from '../api/server.js';
import { ConfigError, loadConfig, type Config } from '../src/config.js';
import { mailIdentityProblem, mailLinksWarning } from '../src/config/mail-identity.js';
import { sealingProblem } from '../src/config/sealing.js';
import { prepareDatabase } from '../src/db.js';
import { createLogger } from '../src/logger.js';
import { DASHBOARD_PATH } from '../api/dashboard-web.js';
import { retryWithin, StartDeadlineError, waitForStores, type StartDeadline } from '../src/preflight.js';
import { nodeVersionProblem } from '../src/node-version.js';
import { createDeps } from '../src/deps.js';
import { startInboundSmtp, type InboundSmtp } from '../src/inbound/smtp-listener.js';
import { startMetrics, type MetricsServer } from '../src/metrics/server.js';
import { startTracing, type ProcessKind } from '../src/tracing/provider.js';
import { startHeartbeat, type Heartbeat } from '../workers/heartbeat.js';
import { checkPoolConfig, parsePools, settlesWithin, startPools, type Pools } from '../workers/main.js';
import { fencesRepository } from '../src/shipping/fence.repository.js';

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const wrongRuntime = nodeVersionProblem();
  if (wrongRuntime) fail(wrongRuntime);
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { pools: { type: 'string' } } });
  const role = positionals[0] ?? 'all';
  if (!['all', 'api', 'workers', 'inbound-mail', 'migrate'].includes(role))
    fail(`unknown role ${role}; use all, api, workers, inbound-mail or migrate`);

  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration: ${err.problems.join('; ')}`);
    throw err;
  }
  const senderProblem = mailIdentityProblem(config);
  if (senderProblem) fail(`configuration: ${senderProblem}`);
  const sealing = sealingProblem(config);
  if (sealing) fail(`configuration: ${sealing}`);
  if (role === 'inbound-mail' && config.inbound.smtpPort === 0) fail('the inbound-mail role needs INBOUND_SMTP_PORT (it is 0, off)');
  let pools: ReturnType<typeof parsePools> = [];
  try {
    pools = role === 'workers' || role === 'all' ? parsePools(values.pools) : [];
    checkPoolConfig(config, pools);
  } catch (err) {
    fail((err as Error).message);
  }
  const logger = createLogger(config.logLevel);
  logger.info({ role, node: process.versions.node }, 'starting');
  const linksWarning = mailLinksWarning(config);
  if (linksWarning) logger.warn({ baseUrl: config.baseUrl, transport: config.mail.transport }, linksWarning);
  if (!config.sealing.keys.length)
    logger.warn(
      'no SEALING_KEYS or SEALING_KEYS_FILE: provider keys and DKIM private keys are sealed under a key kept in the database itself ' +
        '(refused when NODE_ENV=production)',
    );

  // Installed before any start-up work: a signal that arrives while the process migrates or starts its
  // pools is kept and acted on once start-up is done. Node's default would kill it mid-way (npm then
  // exits by the signal too), and a migration cut off leaves knex's migration lock taken.
  let pending: string | null = null;
  let onSignal = (signal: string) => void (pending ??= signal);
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  // A store that cuts connections while we start (a restart, backends terminated) is waited for, with
  // backoff, up to START_DEADLINE_MS; one that is not there at all is reported at once.
  const deadline: StartDeadline = {
    at: Date.now() + config.workers.startDeadlineMs,
    ms: config.workers.startDeadlineMs,
    onRetry: (step, err, waitMs) =>
      logger.warn({ step, err: (err as Error).message, retryInMs: waitMs }, 'start-up: a store cut the connection; trying again'),
  };
  const problems = await waitForStores(config, deadline);
  if (problems.length) fail(problems.join('\n'));

  const { created, applied } = await retryWithin(
    'Postgres',
    'creating and migrating the database',
    () => prepareDatabase(config),
    deadline,
  );
  if (created) logger.info('created database');
  if (applied.length) logger.info({ applied }, 'migrations applied');
  logger.flush();
  if (role === 'migrate') return;

  // Before the queues are made: with OTEL_* set, they carry each add's trace context (and workers join it).
  const tracing = startTracing(config, role as ProcessKind);
  // The collector's origin only: a URL's user and password, if any, stay out of the log.
  if (tracing && config.tracing)
    logger.info({ collector: new URL(config.tracing.url).origin }, 'tracing on: spans exported over OTLP/HTTP');
  const deps = createDeps(config, logger);
  let api: ApiServer | null = null;
  let workers: Pools | null = null;
  if (role === 'all' || role === 'api') {
    // Made (or read) at start by the API: the step here that needs Postgres.
    await retryWithin('Postgres', 'reading the cursor secret', () => deps.cursorSecret(), deadline);
    api = await startApi(deps);
    // The address a person opens: in the log, and as a plain line on a terminal (what `npm start` ends on).
    const dashboard = `${config.baseUrl}${DASHBOARD_PATH}/`;
    logger.info({ dashboard }, `dashboard at ${dashboard}`);
    if (process.stderr.isTTY) process.stderr.write(`\nDashboard: ${dashboard}\n\n`);
  }
  if (role === 'all' || role === 'workers') workers = await startPools(deps, pools);
  // The workers container's health check reads it (bin/worker-health.ts).
  const heartbeat: Heartbeat | null = workers && config.heartbeat ? startHeartbeat(deps, config.heartbeat, workers.started) : null;
  let smtp: InboundSmtp | null = null;
  if (role === 'inbound-mail' || (role === 'all' && config.inbound.smtpPort !== 0)) {
    await deps.ready();
    const where = `${config.inbound.smtpHost}:${config.inbound.smtpPort}`;
    smtp = await startInboundSmtp(deps).catch((err: Error) =>
      fail(`inbound SMTP cannot listen on ${where} (${err.message}); set INBOUND_SMTP_PORT (0 = off)`),
    );
  }

  // One /metrics per process, whatever roles it runs; queues are sampled where the API or pools run.
  const sampled =
    api || workers
      ? { redis: deps.redis, queues: deps.queues, oldestLostAnswer: () => fencesRepository(deps.db).oldestLostAnswer() }
      : null;
  const where = `${config.metrics.host}:${config.metrics.port}`;
  const metrics: MetricsServer | null = await startMetrics(config, logger, deps.db, sampled).catch((err: Error) =>
    fail(`metrics cannot listen on ${where} (${err.message}); set METRICS_PORT (unset = off)`),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    logger.flush();
    const force = setTimeout(() => {
      logger.error('shutdown grace period over; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    force.unref();
    await heartbeat?.stop();
    // All stop within SHUTDOWN_GRACE_MS: the API and the SMTP listener cut connections still open, the pools
    // return jobs still running to their queues (nothing is lost, so this is still a clean stop).
    await Promise.all([api?.close(), workers?.close(), smtp?.close(), metrics?.close()]);
    // A job cut off keeps its database connection, and the pool's destroy would wait for it forever.
    await settlesWithin(deps.close(), 3_000);
    // The spans still buffered go out before the process does.
    if (tracing) await settlesWithin(tracing.shutdown(), 3_000);
    logger.info('stopped');
    process.exit(0);
  };
  onSignal = (signal) => void stop(signal);
  if (pending) onSignal(pending);
}

main().catch((err) => {
  if (err instanceof StartDeadlineError) fail(`start failed: ${err.message}`);
  process.stderr.write(`${JSON.stringify({ error: 'start failed', message: (err as Error).message })}\n`);
  process.exit(1);
});
