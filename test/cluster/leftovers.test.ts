import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alive, freePort, waitFor } from '../helpers/processes.js';
import { cleanLeftoverClusters } from '../helpers/redis-cluster.js';

// A test run killed before its teardown leaves its cluster's servers running; the next run stops them.

describe('the test cluster helper', () => {
  it("stops the servers of a run that is gone and removes their directory, and leaves a live run's alone", async () => {
    // A pid that was a process and is one no longer: a run killed mid-way.
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => gone.once('exit', r));
    const dead = mkdtempSync(path.join(os.tmpdir(), `gas-redis-cluster-${gone.pid}-`));
    const live = mkdtempSync(path.join(os.tmpdir(), `gas-redis-cluster-${process.pid}-`));
    const servers = [dead, live].map((dir) => ({ dir, port: 0, pid: 0 }));
    for (const s of servers) {
      s.port = await freePort();
      const server = spawn('redis-server', ['--port', String(s.port), '--bind', '127.0.0.1', '--dir', s.dir, '--save', ''], {
        stdio: 'ignore',
      });
      s.pid = server.pid!;
      writeFileSync(path.join(s.dir, `${s.port}.pid`), String(s.pid));
    }
    // Each server has started, moved into its --dir and listens, as a leftover of a killed run has long done: the
    // helper stops only a server working in that directory (a just-spawned one, on a loaded machine, is not yet).
    const cwd = (pid: number) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        return '';
      }
    };
    for (const s of servers) await waitFor(async () => cwd(s.pid) === s.dir, `redis-server ${s.port} in its directory`, 10_000);
    try {
      cleanLeftoverClusters();
      await waitFor(async () => !alive(servers[0]!.pid), 'the leftover server to stop', 5_000);
      expect(existsSync(dead)).toBe(false);
      expect(alive(servers[1]!.pid)).toBe(true);
      expect(existsSync(live)).toBe(true);
    } finally {
      for (const s of servers) if (alive(s.pid)) process.kill(s.pid, 'SIGKILL');
      rmSync(live, { recursive: true, force: true });
    }
  });
});
