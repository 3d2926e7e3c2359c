import type { QueueName } from '../../src/jobs/registry.js';
import type { TestEnv } from './env.js';
import { until } from './processes.js';
import { type WorkerChild, workerProcesses } from './worker-processes.js';

/**
 * The scaffolding the kill -9 tests of fenced shipping share (network messages, ad tests, sequence steps): worker
 * processes of one pool on the file's world, started with the test's settings, and killed mid-ship again and again.
 * `killAt(worker, [5, 12, 20], shipped)` waits until `shipped()` reaches each count in turn, kills the running worker
 * with SIGKILL, waits until it is gone and starts the next; it returns how many kills it made. `stopAll()` kills
 * whatever still runs (call it in a `finally`).
 */
export function killFence(env: TestEnv, pool: QueueName, settings: Record<string, string>) {
  const workers = workerProcesses(env);
  const start = () => workers.start(settings, [pool]);
  return {
    start,
    async killAt(running: WorkerChild, after: readonly number[], shipped: () => number, everyMs = 10): Promise<number> {
      let worker = running;
      let kills = 0;
      for (const n of after) {
        await until(async () => shipped() >= n, 60_000, everyMs);
        await worker.kill();
        kills++;
        worker = await start();
      }
      return kills;
    },
    stopAll: () => workers.stopAll(),
  };
}
