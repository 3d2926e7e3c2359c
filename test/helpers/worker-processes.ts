import { spawn, type ChildProcess } from 'node:child_process';
import { envFor, type TestEnv } from './env.js';
import { ROOT, waitFor } from './processes.js';

export interface WorkerChild {
  child: ChildProcess;
  exited: Promise<void>;
  /** kill -9, and wait until it is gone. */
  kill(): Promise<void>;
}

/**
 * Real worker processes (`bin/start.ts workers --pools …`) on a test file's database and prefix: node
 * with tsx as a loader (not the tsx wrapper), so kill -9 hits the process that holds the turn. `stopAll`
 * kills whatever is still running (call it after each test).
 */
export function workerProcesses(env: TestEnv) {
  const children: WorkerChild[] = [];
  return {
    /** Starts one; resolves once its BullMQ worker is registered on every queue of `pools`. */
    async start(extra: Record<string, string> = {}, pools: string[] = ['agent-turns']): Promise<WorkerChild> {
      const queues = pools.map((p) => env.deps.queues.get(p)!);
      const before = await Promise.all(queues.map(async (q) => (await q.getWorkers()).length));
      const { BASE_URL: _vite, ...inherited } = process.env;
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', 'workers', '--pools', pools.join(',')], {
        cwd: ROOT,
        env: { ...inherited, ...envFor(env.config), ...extra },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      // The end of its stderr, for the error when it exits before it is ready.
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4_000);
      });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      const w: WorkerChild = {
        child,
        exited,
        async kill() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      };
      children.push(w);
      // Ready when its workers are registered; a process that exits first fails the start at once, with its stderr.
      const died = exited.then(() => {
        throw new Error(`worker process exited before it was ready (${child.exitCode ?? child.signalCode}): ${stderr}`);
      });
      died.catch(() => undefined);
      await Promise.race([
        waitFor(
          async () => (await Promise.all(queues.map(async (q, i) => (await q.getWorkers()).length > before[i]!))).every(Boolean),
          'worker start',
          60_000,
        ),
        died,
      ]);
      return w;
    },
    async stopAll(): Promise<void> {
      for (const c of children.splice(0)) await c.kill();
    },
  };
}
