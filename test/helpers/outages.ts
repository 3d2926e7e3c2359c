import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { freePort, waitFor } from './processes.js';

/** A private redis-server on its own port, so a test can stop and restart it without touching anyone else's. */
export async function privateRedis(): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const start = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(async () => {
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    }, 'private redis');
  };
  const stop = async () => {
    const p = proc;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start };
}

/**
 * A TCP proxy in front of a real server: `cut()` drops every connection and refuses new ones (the
 * server is "down" as far as the service can tell), `restore()` lets them through again. `refused()` is how
 * many connections it cut at once while cut (how often a client tried again).
 */
export async function tcpProxy(
  targetPort: number,
): Promise<{ port: number; cut(): void; restore(): void; refused(): number; close(): Promise<void> }> {
  let up = true;
  let refused = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (!up) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port,
    cut() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      up = true;
    },
    refused: () => refused,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * Variables that point a configuration at a Redis nothing answers for (port 1): the one server, and
 * the cluster when the file runs on one (a cluster variant), so "Redis away" means the same there.
 */
export function redisAway(): { REDIS_URL: string; REDIS_CLUSTER_NODES?: string } {
  return { REDIS_URL: 'redis://127.0.0.1:1', ...(process.env.REDIS_CLUSTER_NODES ? { REDIS_CLUSTER_NODES: '127.0.0.1:1' } : {}) };
}
