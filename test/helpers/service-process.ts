import { spawn, type ChildProcess } from 'node:child_process';
import { childEnv as env, ROOT, type Finished } from './processes.js';

export interface ServiceProcess {
  child: ChildProcess;
  /** Settles when the process and its output streams have closed. */
  exited: Promise<Finished>;
  /** Settles when the process itself has ended (a descendant may still hold its output open). */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout: () => string;
  output: () => string;
  /** The port from the 'api listening' line, once it is on stdout. */
  port(timeoutMs?: number): Promise<number>;
  /** Waits until stdout holds a line whose `msg` is `msg`. */
  logged(msg: string, timeoutMs?: number): Promise<void>;
}

function wrap(child: ChildProcess): ServiceProcess {
  let stdout = '';
  let stderr = '';
  // Checked on every chunk, so a test can act the moment a line appears (no polling gap).
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (d) => {
    stdout += d;
    for (const check of waiters) check();
  });
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const logged = (msg: string, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!stdout.includes(`"msg":"${msg}"`)) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for log line ${msg}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return {
    child,
    exited,
    ended,
    stdout: () => stdout,
    output: () => stdout + stderr,
    logged,
    async port(timeoutMs = 60_000) {
      await logged('api listening', timeoutMs);
      return Number(/"port":(\d+)[^\n]*"msg":"api listening"/.exec(stdout)![1]);
    },
  };
}

/**
 * Starts bin/start.ts as the server process itself (node with tsx as a loader, no wrapper process), so
 * a signal or kill -9 sent to `child` reaches the service.
 */
export function startService(args: string[], overrides: Record<string, string>): ServiceProcess {
  return startCommand([process.execPath, '--import', 'tsx', 'bin/start.ts', ...args], overrides);
}

/** Runs a command line as given (`node` on PATH is this test's Node), in the repository, with `overrides`. */
export function startCommand([cmd, ...args]: string[], overrides: Record<string, string>): ServiceProcess {
  return wrap(spawn(cmd!, args, { cwd: ROOT, env: env(overrides), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Runs `npm <args>` as the leader of a new process group, so the whole tree it starts can be found. */
export function startNpm(args: string[], overrides: Record<string, string>): ServiceProcess {
  return wrap(spawn('npm', args, { cwd: ROOT, env: env(overrides), stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
}

/** True while any process of the group led by `pgid` is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
