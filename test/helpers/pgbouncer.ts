import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ensurePackage, freePort, reapStaleRuns, startDaemon, stopByPidFile } from './processes.js';

/**
 * A PgBouncer of the test run's own, in transaction pooling mode, in front of the test Postgres: every
 * database name is passed through (`* =`), so each test file's own database is reachable through it.
 * Installed by scripts/ensure-package.sh when missing; the Debian service is never used.
 */
export interface Pgbouncer {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

const DIR_PREFIX = 'gas-pgbouncer-';
/** A database name that reaches Postgres's `postgres` database through exactly one server connection. */
export const ONE_SERVER_DB = 'gas_one_server';

/** Stops the PgBouncers of test runs that are gone (killed before their teardown). */
const reapStale = () => reapStaleRuns(DIR_PREFIX, (dir) => stopByPidFile(path.join(dir, 'pgbouncer.pid')));

function binary(): string {
  const found = spawnSync('bash', ['-c', 'command -v pgbouncer || ls /usr/sbin/pgbouncer'], { encoding: 'utf8' });
  return found.stdout.trim().split('\n')[0] ?? '';
}

/**
 * Starts a PgBouncer in front of the Postgres named by `postgresUrl` (its host, port, user and password),
 * with `poolSize` server connections per database, each closed after `serverIdleSeconds` unused.
 */
export async function startPgbouncer(postgresUrl: string, { poolSize = 12, serverIdleSeconds = 10 } = {}): Promise<Pgbouncer> {
  ensurePackage('pgbouncer', '/usr/sbin/pgbouncer');
  reapStale();
  const target = new URL(postgresUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const dir = mkdtempSync(path.join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  // PgBouncer refuses to run as root; as root it is started with -u nobody, which must read its files.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const server = `host=${target.hostname} port=${target.port || 5432} user=${user}${password ? ` password=${password}` : ''}`;
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `${ONE_SERVER_DB} = ${server} dbname=postgres pool_size=1`,
      `* = ${server}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'pool_mode = transaction',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      `admin_users = ${user}`,
      'max_client_conn = 2000',
      // Server connections per database: a test file's pool (10) and its worker processes share them.
      `default_pool_size = ${poolSize}`,
      // Let go of idle server connections soon: other runs on this machine share Postgres's 100.
      `server_idle_timeout = ${serverIdleSeconds}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/postgres`;
  const answers = async () => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  const daemon = await startDaemon({ name: 'pgbouncer', bin: binary(), args: [...asRoot, ini], dir, ready: answers, timeoutMs: 15_000 });
  return { port, pid: daemon.pid, stop: daemon.stop };
}

/** The same database as `directUrl`, reached through the PgBouncer on `port`. */
export function viaPgbouncer(directUrl: string, port: number): string {
  const url = new URL(directUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  url.password = '';
  return url.toString();
}
