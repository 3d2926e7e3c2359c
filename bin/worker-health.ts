/**
 * The workers' health check: `node bin/worker-health.ts [FILE]` (FILE defaults to WORKER_HEARTBEAT_FILE).
 * Exit 0 when the heartbeat a workers process writes (workers/heartbeat.ts) is fresh and says Postgres and
 * Redis answer; exit 1 with one line saying why otherwise. Node runs this file itself (its own type
 * stripping, no tsx, no imports from the project), so a check costs one bare Node start-up.
 */
import { readFileSync } from 'node:fs';

interface Beat {
  ok: boolean;
  failed: string[];
  at: string;
  everyMs: number;
  pid: number;
  pools: string[];
}

function unhealthy(why: string): never {
  process.stdout.write(`unhealthy: ${why}\n`);
  process.exit(1);
}

const file = process.argv[2] ?? process.env.WORKER_HEARTBEAT_FILE;
if (!file) unhealthy('no heartbeat file named (WORKER_HEARTBEAT_FILE is not set)');

let beat: Beat;
try {
  beat = JSON.parse(readFileSync(file, 'utf8')) as Beat;
} catch (err) {
  unhealthy(`no heartbeat in ${file} (${(err as Error).message}): the workers are not running, still starting, or stopped`);
}

// Three beats missed (each may spend up to two seconds asking the stores): the process hangs or died.
const age = Date.now() - Date.parse(beat.at);
if (!(age <= 3 * beat.everyMs + 2_000)) {
  unhealthy(`last heartbeat ${Math.round(age / 1000)} s ago (pid ${beat.pid}, one due every ${beat.everyMs} ms)`);
}
if (!beat.ok) unhealthy(`the workers (pid ${beat.pid}) cannot reach ${beat.failed.join(' and ')}`);
process.stdout.write(`ok: pools ${beat.pools.join(',')} (pid ${beat.pid}), heartbeat ${age} ms ago\n`);
