import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envFor, setupTestEnv, type TestEnv } from '../helpers/env.js';
import { waitFor } from '../helpers/processes.js';
import { groupAlive, startNpm } from '../helpers/service-process.js';

// These tests spawn real processes (npm, tsx start-up): slow on a loaded 2-core machine.
const SLOW = 180_000;

let env: TestEnv;
beforeAll(async () => {
  env = await setupTestEnv();
});
afterAll(() => env.close());

/** True when nothing accepts a connection on the port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('stopping on a signal', { timeout: SLOW }, () => {
  it('SIGTERM to the npm start process stops the server and every process under npm, exit code 0', async () => {
    const proc = startNpm(['start'], { ...envFor(env.config), PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '5000' });
    const group = proc.child.pid!;
    try {
      const port = await proc.port(90_000);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      proc.child.kill('SIGTERM');
      expect((await proc.ended).code).toBe(0);
      await waitFor(async () => !groupAlive(group), 'every process npm started to exit', 60_000);
      expect(await refused(port)).toBe(true);
      expect(proc.stdout()).toContain('"msg":"stopped"');
    } finally {
      if (groupAlive(group)) process.kill(-group, 'SIGKILL');
    }
  });
});
