import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathWithThisNode } from '../../src/node-version.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/**
 * Installs Debian's `pkg` when `program` (a command name or a path) is missing, through
 * scripts/ensure-package.sh (root and apt-get; elsewhere it says what to install and this throws).
 */
export function ensurePackage(pkg: string, program: string): void {
  const install = spawnSync('bash', [path.join(ROOT, 'scripts/ensure-package.sh'), pkg, program], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (install.status !== 0) throw new Error(`${pkg} is missing and could not be installed (scripts/ensure-package.sh)`);
}

/** Whether a process with this pid is running (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Cleans up after test runs that are gone (killed before their teardown): each temp dir named
 * `<dirPrefix><run's pid>-…` whose run is not alive has `stop(dir)` called on what it left running, then goes.
 */
export function reapStaleRuns(dirPrefix: string, stop: (dir: string) => void): void {
  for (const name of readdirSync(tmpdir())) {
    const run = Number(new RegExp(`^${dirPrefix}(\\d+)-`).exec(name)?.[1] ?? NaN);
    if (Number.isNaN(run) || alive(run)) continue;
    const dir = path.join(tmpdir(), name);
    stop(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGTERM to the process whose pid `pidFile` holds, when the file exists and the process runs. */
export function stopByPidFile(pidFile: string): void {
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : NaN;
  if (!Number.isNaN(pid) && alive(pid)) process.kill(pid, 'SIGTERM');
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** This process's environment for a child: `node` (and tools started as `#!/usr/bin/env node`) is this test's Node. */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  // Vite's BASE_URL="/" must not leak into the service's configuration.
  const { BASE_URL: _vite, ...rest } = process.env;
  return { ...rest, PATH: pathWithThisNode(), ...env };
}

/** Runs a command to completion and collects its output. */
export function run(cmd: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Runs one of the repository's TypeScript programs (`bin/admin.ts …`) to completion as node with tsx as a
 * loader: one process, where the `tsx` command starts a second Node to run it in (npm's own scripts are
 * run through `npm run` where a test means them).
 */
export function runTs(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Finished> {
  return run(process.execPath, ['--import', 'tsx', ...args], env, timeoutMs);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Polls until `check` is true; throws with `what` after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Polls `fn` until it returns something truthy, and returns that; throws after `ms`. */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 10_000, everyMs = 25): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Reads `read` until `ok` holds of what it gave, and returns that; after `timeoutMs` throws naming `what` and the
 * last value read (so a failure says where it got stuck).
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A long-running program a test started in a directory of its own (a private Prometheus, PgBouncer…). */
export interface Daemon {
  pid: number;
  /** Stops it with SIGTERM (if it still runs) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts `bin` with its output appended to `<dir>/<name>.log` and its pid in `<dir>/<name>.pid` (for reapStaleRuns
 * after a killed test run), then waits until `ready` answers true. An exit before then, or no answer within
 * `timeoutMs`, kills it and throws with its log.
 */
export async function startDaemon(opts: {
  name: string;
  bin: string;
  args: string[];
  dir: string;
  ready: () => Promise<boolean>;
  timeoutMs: number;
}): Promise<Daemon> {
  const log = path.join(opts.dir, `${opts.name}.log`);
  const out = openSync(log, 'a');
  const child: ChildProcess = spawn(opts.bin, opts.args, { stdio: ['ignore', out, out] });
  writeFileSync(path.join(opts.dir, `${opts.name}.pid`), String(child.pid));
  let exited = false;
  const exit = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => {
      exited = true;
      reject(new Error(`${opts.name} exited (${code ?? signal}): ${readFileSync(log, 'utf8')}`));
    }),
  );
  exit.catch(() => undefined);
  try {
    await Promise.race([waitFor(opts.ready, `${opts.name} to be ready`, opts.timeoutMs), exit]);
  } catch (err) {
    if (!exited) child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${readFileSync(log, 'utf8')}`);
  }
  return {
    pid: child.pid!,
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      rmSync(opts.dir, { recursive: true, force: true });
    },
  };
}
