/**
 * Instruction counts of a server under `valgrind --tool=callgrind`: timings of a few µs are noise on
 * these VMs (the same code moves by a third between runs), instruction counts move by a few percent.
 * The server's counters are zeroed before a target and dumped after it (`callgrind_control`); a figure
 * is the instructions the process ran (every thread: JavaScript, the JIT, the garbage collector, libuv),
 * not the kernel's work in its system calls.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function installed(cmd: string): boolean {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether this machine can count instructions; the reason it cannot, for the section's body. */
export function callgrindMissing(): string | null {
  return installed('valgrind') && installed('callgrind_control')
    ? null
    : 'Not measured: valgrind (Debian package `valgrind`) is not installed on this machine.';
}

export interface Counted {
  child: ChildProcess;
  /** Instructions the process ran for `fn`, divided by `per` (calls or requests). */
  measure(fn: () => Promise<unknown>, per: number): Promise<number>;
  stop(): Promise<void>;
}

/** Starts `command args` under callgrind (env as given: valgrind's gdbserver names its pipes by `HOST`). */
export async function underCallgrind(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Counted> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gas-callgrind-'));
  const env = opts.env ?? process.env;
  const child = spawn(
    'valgrind',
    // JIT-compiled code is rewritten in place: without this callgrind would run stale translations.
    ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/out`, command, ...args],
    { cwd: opts.cwd, env, stdio: 'ignore' },
  );
  const controlEnv = { ...process.env, HOST: env.HOST };
  if (env.HOST === undefined) delete controlEnv.HOST;
  const control = (action: string) => execFileSync('callgrind_control', [action, String(child.pid)], { env: controlEnv, stdio: 'ignore' });
  let dumps = 0;
  return {
    child,
    async measure(fn, per) {
      control('--zero');
      await fn();
      control('--dump');
      dumps += 1;
      // callgrind_control answers once the dump is written: `out.1`, `out.2`, … beside the final `out`.
      const text = await readFile(path.join(dir, `out.${dumps}`), 'utf8');
      return Number(/^summary: (\d+)$/m.exec(text)?.[1] ?? Number.NaN) / per;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
