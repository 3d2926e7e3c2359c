import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { parse } from 'yaml';
import { envFor } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { freePort, ROOT, run, waitFor } from '../helpers/processes.js';
import { startCommand } from '../helpers/service-process.js';

/**
 * Docker, as shipped, read from the files themselves (no Docker engine here): the image's start command and
 * the compose services' commands and health checks run from the repository, and what compose must say.
 */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const dockerfile = read('Dockerfile');
interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  restart?: string;
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const imageCmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
const workers = services.workers!;
const inbound = services.inbound!;

// These tests start the service (tsx start-up, migrations): slow on a loaded 2-core machine.
const SLOW = 180_000;
/** The image runs with NODE_ENV=production, which needs a sealing key from outside the database. */
const SEALING = `k1:${Buffer.alloc(32, 7).toString('base64')}`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gas-docker-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs a service's compose health check as compose would (`CMD` form, from /app), with the container's `env`. */
const composeCheck = (service: Service, env: Record<string, string>) => {
  const [cmd, ...args] = service.healthcheck!.test.slice(1);
  return run(cmd!, args, env);
};
const healthCheck = (file: string) => composeCheck(workers, { WORKER_HEARTBEAT_FILE: file });
const inboundCheck = (port: number) => composeCheck(inbound, { INBOUND_SMTP_PORT: String(port) });

/** A TCP listener on loopback that answers each connection with `greet` (nothing when null). */
async function listener(greet: string | null): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => {
    if (greet !== null) socket.write(greet);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

describe('the image', { timeout: SLOW }, () => {
  it("the Dockerfile's CMD, run from the repository with NODE_ENV=production, serves /healthz on the pinned Node", async ({ env }) => {
    expect(imageCmd).toEqual(['node', '--import', 'tsx', 'bin/start.ts', 'all']);
    expect(dockerfile).toMatch(/^ENV NODE_ENV=production$/m);
    const proc = startCommand(imageCmd, {
      ...envFor(env.config),
      NODE_ENV: 'production',
      SEALING_KEYS: SEALING,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      const port = await proc.port(90_000);
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      expect(proc.stdout()).toContain(`"role":"all","node":"${process.versions.node}","msg":"starting"`);
      proc.child.kill('SIGTERM');
      expect((await proc.exited).code).toBe(0);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it("the workers' compose command writes a heartbeat its health check passes, and fails once it stops", async ({ env }) => {
    const file = path.join(dir, 'workers.heartbeat');
    expect(workers.environment?.WORKER_HEARTBEAT_FILE).toBe('/tmp/workers.heartbeat');
    expect(workers.command).toEqual([...imageCmd.slice(0, -1), 'workers']);
    const proc = startCommand(workers.command!, {
      ...envFor(env.config),
      NODE_ENV: 'production',
      SEALING_KEYS: SEALING,
      LOG_LEVEL: 'info',
      WORKER_HEARTBEAT_FILE: file,
    });
    try {
      await proc.logged('worker pools running', 90_000);
      // The first beat follows the pools' start; until it is written the check says so and fails.
      await waitFor(async () => (await healthCheck(file)).code === 0, 'a passing health check', 30_000);
      const ok = await healthCheck(file);
      expect(ok.stdout).toMatch(/^ok: pools [a-z-]+(,[a-z-]+)+ \(pid \d+\), heartbeat \d+ ms ago\n$/);
      proc.child.kill('SIGTERM');
      expect((await proc.exited).code).toBe(0);
      const gone = await healthCheck(file);
      expect(gone.code).toBe(1);
      expect(gone.stdout).toMatch(/^unhealthy: no heartbeat in /);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it("the inbound listener's compose command greets its health check over SMTP, which fails once it stops", async ({ env }) => {
    expect(inbound.command).toEqual([...imageCmd.slice(0, -1), 'inbound-mail']);
    expect(inbound.environment?.INBOUND_SMTP_PORT).toBe('2525');
    const port = await freePort();
    const proc = startCommand(inbound.command!, {
      ...envFor(env.config),
      NODE_ENV: 'production',
      SEALING_KEYS: SEALING,
      LOG_LEVEL: 'info',
      INBOUND_SMTP_PORT: String(port),
    });
    try {
      await proc.logged('inbound smtp listening', 90_000);
      expect(await inboundCheck(port)).toMatchObject({ code: 0, stdout: `ok: SMTP listener on port ${port} greets and closes\n` });
      proc.child.kill('SIGTERM');
      expect((await proc.exited).code).toBe(0);
      const gone = await inboundCheck(port);
      expect(gone.code).toBe(1);
      expect(gone.stdout).toMatch(new RegExp(`^unhealthy: nothing listening on port ${port} \\(connect ECONNREFUSED`));
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('the inbound health check fails on a listener that refuses mail or says nothing', async () => {
    const refusing = await listener('421 4.3.2 Service shutting down\r\n');
    const silent = await listener(null);
    try {
      expect(await inboundCheck(refusing.port)).toMatchObject({
        code: 1,
        stdout: `unhealthy: the listener on port ${refusing.port} greets with 421, not 220\n`,
      });
      expect(await inboundCheck(silent.port)).toMatchObject({
        code: 1,
        stdout: `unhealthy: no SMTP answer on port ${silent.port} within 2500 ms\n`,
      });
    } finally {
      refusing.server.close();
      silent.server.close();
    }
  });

  it('the health check fails on a heartbeat three beats old, or one that names a store out of reach', async () => {
    const beat = {
      ok: true,
      failed: [] as string[],
      at: new Date(Date.now() - 60_000).toISOString(),
      everyMs: 5_000,
      pid: 7,
      pools: ['agent-turns'],
    };
    const stale = path.join(dir, 'stale.heartbeat');
    await writeFile(stale, JSON.stringify(beat));
    const old = await healthCheck(stale);
    expect(old.code).toBe(1);
    expect(old.stdout).toMatch(/^unhealthy: last heartbeat 6\d s ago \(pid 7, one due every 5000 ms\)\n$/);
    const down = path.join(dir, 'down.heartbeat');
    await writeFile(down, JSON.stringify({ ...beat, ok: false, failed: ['redis'], at: new Date().toISOString() }));
    expect(await healthCheck(down)).toMatchObject({ code: 1, stdout: 'unhealthy: the workers (pid 7) cannot reach redis\n' });
  });
});

describe('docker-compose.yml', () => {
  it('pins every image by digest, and the Dockerfile its base', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.image) expect(s.image, name).toMatch(/^[a-z0-9./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
    }
    expect(dockerfile).toMatch(/^FROM [^\s@]+:[\w.-]+@sha256:[0-9a-f]{64}$/m);
  });

  it('holds no Postgres password: it comes from .env (.env.example lists it) and compose refuses to start without it', () => {
    const text = read('docker-compose.yml');
    expect(services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/);
    expect(text).toMatch(/DATABASE_URL: postgres:\/\/postgres:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\//);
    expect(text).not.toMatch(/postgres:postgres@|POSTGRES_PASSWORD: postgres/);
    expect(read('.env.example')).toMatch(/^POSTGRES_PASSWORD=$/m);
    expect(read('.dockerignore')).toMatch(/^\.env$/m);
  });

  it('publishes every port on loopback unless a variable says otherwise', () => {
    const ports = Object.values(services).flatMap((s) => s.ports ?? []);
    expect(ports.length).toBeGreaterThan(0);
    for (const p of ports) expect(p).toMatch(/^(127\.0\.0\.1:|\$\{[A-Z_]+:-127\.0\.0\.1:)/);
    expect(services.api!.ports).toEqual([expect.stringMatching(/^\$\{API_PUBLISH:-127\.0\.0\.1:3000\}:3000$/)]);
  });

  it('gives the api and the workers one mail volume where the local transport writes, owned by the user the image runs as', () => {
    // MAIL_LOCAL_DIR's default, relative to the image's WORKDIR.
    const workdir = /^WORKDIR (\S+)$/m.exec(dockerfile)![1]!;
    const mount = `mail:${path.posix.join(workdir, 'var/mail')}`;
    expect(services.api!.volumes).toContain(mount);
    expect(workers.volumes).toContain(mount);
    expect(compose.volumes).toHaveProperty('mail');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/mkdir -p var\/mail[\s\\&]+chown -R node:node var\b/);
    expect(services.api!.environment).not.toHaveProperty('MAIL_LOCAL_DIR');
    expect(workers.environment).not.toHaveProperty('MAIL_LOCAL_DIR');
  });

  it('health-checks the api, the workers and the inbound listener', () => {
    expect(services.api!.healthcheck!.test.join(' ')).toContain('/healthz');
    expect(workers.healthcheck!.test).toEqual(['CMD', 'node', 'bin/worker-health.ts']);
    expect(inbound.healthcheck!.test).toEqual(['CMD', 'node', 'bin/inbound-health.ts']);
  });

  it('restarts every service that stops on its own, and none an operator stopped', () => {
    for (const [name, s] of Object.entries(services)) expect(s.restart, name).toBe('unless-stopped');
  });
});
