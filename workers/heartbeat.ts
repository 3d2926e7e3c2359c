import { rename, rm, writeFile } from 'node:fs/promises';
import { unreachableStores, type Deps } from '../src/deps.js';

/** What the heartbeat file holds; bin/worker-health.ts reads it (keep the two in step). */
export interface Beat {
  ok: boolean;
  /** The stores that did not answer this beat (empty when ok). */
  failed: string[];
  at: string;
  everyMs: number;
  pid: number;
  pools: string[];
}

export interface Heartbeat {
  /** Stops beating and removes the file, so a stopping process is unhealthy at once. */
  stop(): Promise<void>;
}

/**
 * The workers' liveness for a health check that cannot ask them over HTTP (they serve none): every
 * `everyMs` this process checks Postgres and Redis as GET /healthz does and writes the outcome to `file`
 * (written whole, then renamed over the old one, so a reader never sees half of it). A file that stops
 * changing means a process that hangs or died; `ok: false` names the store it cannot reach.
 */
export function startHeartbeat(
  deps: Pick<Deps, 'db' | 'redis' | 'logger'>,
  settings: { file: string; everyMs: number },
  pools: readonly string[],
): Heartbeat {
  const { file, everyMs } = settings;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let complained = false;

  const beat = async () => {
    const failed = await unreachableStores(deps);
    const body: Beat = { ok: !failed.length, failed, at: new Date().toISOString(), everyMs, pid: process.pid, pools: [...pools] };
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      await writeFile(tmp, `${JSON.stringify(body)}\n`);
      await rename(tmp, file);
      complained = false;
    } catch (err) {
      // Said once per run of failures, not every beat.
      if (!complained) deps.logger.error({ file, err: (err as Error).message }, 'cannot write the worker heartbeat file');
      complained = true;
    }
  };

  let running: Promise<void> = Promise.resolve();
  const loop = () => {
    running = beat().finally(() => {
      if (!stopped) timer = setTimeout(loop, everyMs).unref();
    });
  };
  loop();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await rm(file, { force: true });
    },
  };
}
