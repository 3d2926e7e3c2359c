import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startHeartbeat, type Beat } from '../../workers/heartbeat.js';
import { it } from '../helpers/fixture.js';
import { freePort, until } from '../helpers/processes.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gas-heartbeat-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const beatIn = async (file: string): Promise<Beat | null> => JSON.parse(await readFile(file, 'utf8').catch(() => 'null')) as Beat | null;

describe('the worker heartbeat', () => {
  it('says ok while Postgres and Redis answer, writes again every beat, and removes its file on stop', async ({ env }) => {
    const file = path.join(dir, 'ok.heartbeat');
    const heartbeat = startHeartbeat(env.deps, { file, everyMs: 100 }, ['agent-turns', 'shipments']);
    const first = await until(() => beatIn(file));
    expect(first).toMatchObject({ ok: true, failed: [], everyMs: 100, pid: process.pid, pools: ['agent-turns', 'shipments'] });
    const next = await until(async () => {
      const b = await beatIn(file);
      return b && b.at !== first.at ? b : null;
    });
    expect(Date.parse(next.at)).toBeGreaterThan(Date.parse(first.at));
    await heartbeat.stop();
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('names the store it cannot reach', async ({ env }) => {
    const file = path.join(dir, 'down.heartbeat');
    // A real client to a port where no Redis listens.
    const redis = new Redis(`redis://127.0.0.1:${await freePort()}`, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    const heartbeat = startHeartbeat({ db: env.deps.db, redis, logger: createLogger('silent') }, { file, everyMs: 100 }, ['maintenance']);
    try {
      expect(await until(() => beatIn(file), 15_000)).toMatchObject({ ok: false, failed: ['redis'], pools: ['maintenance'] });
    } finally {
      await heartbeat.stop();
      redis.disconnect();
    }
  });
});
