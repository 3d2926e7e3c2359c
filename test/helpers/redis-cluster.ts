import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { alive, run } from './processes.js';

/**
 * A real Redis Cluster on loopback for tests: `redis-server --cluster-enabled yes` processes (masters,
 * each with its replicas) joined by `redis-cli --cluster create`, without persistence, their files in
 * a temporary directory named after the test run's pid. A run killed before its teardown leaves the
 * directory behind; the next run's `cleanLeftoverClusters` stops its servers and removes it.
 */
export interface TestCluster {
  /** `127.0.0.1:port,…` (`rediss://127.0.0.1:port,…` with `tls`), the form REDIS_CLUSTER_NODES takes. */
  nodes: string;
  ports: number[];
  /** Kills one node's server with SIGKILL (no shutdown, no goodbye to the cluster). */
  kill(port: number): void;
  /** Stops (SIGSTOP) or resumes (SIGCONT) one node's server: stopped, it reads nothing and answers nothing. */
  pause(port: number, paused: boolean): void;
  /** The node serving `slot` as master now, by port. */
  masterOf(slot: number): Promise<number>;
  /** A connection of its own to one node (its password and CA applied; no retries), for a test to talk to that node. */
  node(port: number): Redis;
  /** With `tls`: the CA that signed the nodes' certificate (PEM file), for NODE_EXTRA_CA_CERTS. */
  caFile: string | null;
  stop(): Promise<void>;
}

const DIR_PREFIX = 'gas-redis-cluster-';

/** A server of ours could not take its port: another attempt picks other ports. */
class PortTaken extends Error {}
const TMP = os.tmpdir();

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/** `count` ports p with p and its cluster bus port p + 10000 both free, from a random start (runs side by side differ). */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  let p = 20_000 + Math.floor(Math.random() * 25_000);
  for (let tries = 0; ports.length < count && tries < 2_000; tries++, p++) {
    if (p + 10_000 > 65_535) p = 20_000;
    if ((await canListen(p)) && (await canListen(p + 10_000))) ports.push(p);
  }
  if (ports.length < count) throw new Error('no free ports for a test Redis Cluster');
  return ports;
}

/** Stops the servers of clusters whose run is gone (their pid files) and removes their directories. */
export function cleanLeftoverClusters(): void {
  for (const name of readdirSync(TMP)) {
    const owner = Number(new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(name)?.[1] ?? NaN);
    if (Number.isNaN(owner) || alive(owner)) continue;
    const dir = path.join(TMP, name);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.pid'))) {
      const pid = Number(readFileSync(path.join(dir, file), 'utf8'));
      // Only a server working in that directory (redis-server changes to its --dir and rewrites its
      // command line): a pid reused since by another process is left alone.
      const cwd = (() => {
        try {
          return readlinkSync(`/proc/${pid}/cwd`);
        } catch {
          return '';
        }
      })();
      if (cwd === dir) process.kill(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How the helper's own connections reach a node: its password, and the CA when the nodes speak TLS. */
type Access = { password?: string; ca?: string };

const connect = (port: number, access: Access, more: RedisOptions = {}) =>
  new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    password: access.password,
    ...(access.ca ? { tls: { ca: access.ca } } : {}),
    ...more,
  });

async function info(port: number, section: string, access: Access): Promise<Record<string, string>> {
  const r = connect(port, access, { connectTimeout: 1_000 });
  r.on('error', () => {});
  try {
    await r.connect();
    const text = section === 'cluster' ? String(await r.cluster('INFO')) : await r.info(section);
    return Object.fromEntries(
      text
        .split(/\r?\n/)
        .filter((l) => l.includes(':'))
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
    );
  } finally {
    r.disconnect();
  }
}

/** Polls `check` every 50 ms until it is true; throws naming `what` after `ms` (or what `check` threw). */
async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check().catch((err: unknown) => (err instanceof PortTaken ? Promise.reject(err) : false)))) {
    if (Date.now() > end) throw new Error(`test Redis Cluster: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `password`: every node requires it (requirepass) and replicas use it with their masters (masterauth).
 * `tls`: the nodes speak only TLS, to clients, to each other and to their replicas, with a certificate
 * for 127.0.0.1 signed by a CA made for the cluster (`caFile`); clients need no certificate.
 */
type Options = { masters?: number; replicas?: number; nodeTimeoutMs?: number; password?: string; tls?: boolean };

/** A CA and a certificate for 127.0.0.1 it signed, in `dir`: what a TLS test cluster serves. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=gas-test-ca',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
  );
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', f('node.key'), '-out', f('node.csr'));
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  ssl(
    ...['x509', '-req', '-in', f('node.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2'],
    ...['-extfile', f('san.ext'), '-out', f('node.pem')],
  );
  return { ca: f('ca.pem'), cert: f('node.pem'), key: f('node.key') };
}

/**
 * Starts `masters` masters with `replicas` replicas each. `nodeTimeoutMs` is cluster-node-timeout:
 * how long a master may be silent before its replica takes over. A port taken by another process
 * between the check and the server's start (test runs side by side) costs one more attempt.
 */
export async function startTestCluster(opts: Options = {}): Promise<TestCluster> {
  const found = await run('redis-server', ['--version'], {}).catch((err: Error) => ({ code: -1, stdout: '', stderr: err.message }));
  if (found.code !== 0)
    throw new Error(
      `the tests start a Redis Cluster with redis-server and redis-cli (Debian: apt-get install redis-server): ${found.stderr}`,
    );
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt === 3 || !(err instanceof PortTaken)) throw err;
    }
  }
}

async function startOnce(opts: Options): Promise<TestCluster> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicas ?? 1;
  const dir = mkdtempSync(path.join(TMP, `${DIR_PREFIX}${process.pid}-`));
  const ports = await freePorts(masters * (1 + replicas));
  const servers = new Map<number, ChildProcess>();
  const certs = opts.tls ? makeCertificates(dir) : null;
  const access: Access = { password: opts.password, ca: certs ? readFileSync(certs.ca, 'utf8') : undefined };
  const listen = (port: number) =>
    certs
      ? ['--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-replication', 'yes', '--tls-auth-clients', 'no'].concat([
          '--tls-cert-file',
          certs.cert,
          '--tls-key-file',
          certs.key,
          '--tls-ca-cert-file',
          certs.ca,
        ])
      : ['--port', String(port)];
  const stop = async () => {
    await Promise.all(
      [...servers.values()].map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.exitCode !== null || s.signalCode !== null) return resolve();
            s.once('exit', () => resolve());
            s.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const server = spawn(
        'redis-server',
        [
          ...listen(port),
          ...['--bind', '127.0.0.1', '--dir', dir, '--logfile', path.join(dir, `${port}.log`)],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, `nodes-${port}.conf`)],
          ...['--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 2_000), '--save', '', '--appendonly', 'no'],
          // Replicas sync at once (7.0 waits 5 s for more replicas by default).
          ...['--repl-diskless-sync-delay', '0'],
          ...(opts.password ? ['--requirepass', opts.password, '--masterauth', opts.password] : []),
        ],
        { stdio: 'ignore' },
      );
      servers.set(port, server);
      writeFileSync(path.join(dir, `${port}.pid`), String(server.pid));
    }
    // Each port answered by the server this run started there (not by whoever took the port first).
    await until(async () => {
      if ([...servers.values()].some((s) => s.exitCode !== null)) throw new PortTaken('a test cluster server exited at start');
      const answers = await Promise.all(ports.map((p) => info(p, 'server', access).catch(() => null)));
      return answers.every((a, i) => a !== null && Number(a.process_id) === servers.get(ports[i]!)!.pid);
    }, 'the servers to answer');
    const created = await run(
      'redis-cli',
      [
        ...['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
        ...(certs ? ['--tls', '--cacert', certs.ca] : []),
      ],
      opts.password ? { REDISCLI_AUTH: opts.password } : {},
    );
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    // A master turns ok no sooner than 2 s after it started (Redis' CLUSTER_WRITABLE_DELAY): the floor
    // of this start, whatever joins the nodes.
    await until(async () => {
      const all = await Promise.all(ports.map((p) => info(p, 'cluster', access)));
      return all.every((i) => i.cluster_state === 'ok' && Number(i.cluster_known_nodes) === ports.length);
    }, 'cluster_state:ok on every node');
    // Every replica has its master's data before a test may lean on it (a failover needs a synced replica).
    await until(async () => {
      const all = await Promise.all(ports.map((p) => info(p, 'replication', access)));
      return all.filter((i) => i.role === 'slave' && i.master_link_status === 'up').length === masters * replicas;
    }, 'replicas in sync');
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes: ports.map((p) => `${certs ? 'rediss://' : ''}127.0.0.1:${p}`).join(','),
    caFile: certs?.ca ?? null,
    ports,
    kill(port) {
      servers.get(port)?.kill('SIGKILL');
    },
    node(port) {
      const r = connect(port, access);
      r.on('error', () => {});
      return r;
    },
    pause(port, paused) {
      servers.get(port)?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
    },
    async masterOf(slot) {
      for (const port of ports) {
        if (!servers.get(port) || servers.get(port)!.exitCode !== null || servers.get(port)!.signalCode !== null) continue;
        const r = connect(port, access);
        r.on('error', () => {});
        try {
          await r.connect();
          const shard = (await r.cluster('SLOTS')).find(([from, to]) => slot >= from && slot <= to);
          if (shard?.[2]) return Number(shard[2][1]);
        } catch {
          // Try the next node.
        } finally {
          r.disconnect();
        }
      }
      throw new Error(`no node serves slot ${slot}`);
    },
    stop,
  };
}
