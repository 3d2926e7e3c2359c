import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectProvider } from '../../src/channels/connections.js';
import { cardAutoResolve } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import { startPools, type Pools } from '../../workers/main.js';
import { buildCard } from '../helpers/factories.js';
import { envFor, setupTestEnv, type TestEnv } from '../helpers/env.js';
import { ROOT, until, waitFor } from '../helpers/processes.js';
import { QUICK_STALLS, waitQueuesIdle } from '../helpers/queues-idle.js';
import { KILL_SHIP_ENV, startProviderBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';

/**
 * kill -9 of the worker that ships network messages (the trust ladder's deadlines, card-timers pool),
 * again and again, while 30 cards ship through a provider bridge that answers slowly. Every message must
 * reach the bridge exactly once: none twice (one fence per card, one key per fence), none lost (the
 * shipping sweep reconciles a fence a kill left `sending` by lookup; a job killed before its claim is run
 * again by BullMQ's stalled-job check), counted once that has happened and nothing is left queued.
 */
const CARDS = 30;
let env: TestEnv;
let bridge: ProviderBridgeStandIn;
let pools: Pools;
const children: ChildProcess[] = [];

const shipEnv = { ...KILL_SHIP_ENV, ...QUICK_STALLS };

beforeAll(async () => {
  bridge = await startProviderBridge();
  env = await setupTestEnv({ env: shipEnv });
  // Reconciliation and the shipping sweep run here; the shipping itself in the worker that gets killed.
  pools = await startPools(env.deps, ['shipments']);
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await pools?.close();
  await env?.close();
  await bridge?.close();
});

async function startWorker(): Promise<ChildProcess> {
  const queue = env.deps.queues.get('card-timers')!;
  const before = (await queue.getWorkers()).length;
  const { BASE_URL: _vite, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', 'workers', '--pools', 'card-timers'], {
    cwd: ROOT,
    env: { ...inherited, ...envFor(env.config), ...shipEnv },
    stdio: 'ignore',
  });
  children.push(child);
  await waitFor(async () => (await queue.getWorkers()).length > before, 'worker start', 60_000);
  return child;
}

describe('kill -9 of the worker shipping network messages', () => {
  it('ships every message to the bridge exactly once: none twice, none lost', async () => {
    const { accountId } = await env.tenant();
    await connectProvider(
      env.deps.db,
      env.config.sealing,
      { accountId, kind: 'network', transport: 'http', url: bridge.url, key: bridge.key },
      Date.now(),
    );
    const at = Date.now();
    const cards = [];
    for (let i = 0; i < CARDS; i++) {
      const card = await buildCard(env.deps.db, accountId, 'approval', {
        sourceType: 'network_message',
        title: `Hello ${i}`,
        payload: { work: 'network_message', to: `https://www.linkedin.com/in/lead-${i}`, draft: { body: `Hello ${i}` } },
        autoResolveAt: at,
      });
      cards.push(card);
    }
    bridge.state.delayMs = 60;
    let worker = await startWorker();
    for (const card of cards) await enqueue(env.deps.queues, cardAutoResolve, { accountId, cardId: card.id, at });
    let kills = 0;
    for (const after of [5, 12, 20]) {
      await until(async () => bridge.shipments.length >= after, 60_000, 10);
      worker.kill('SIGKILL');
      kills++;
      await new Promise((r) => worker.once('exit', r));
      worker = await startWorker();
    }
    await until(
      async () => {
        const rows = await env.deps.db('review_cards').where({ account_id: accountId, status: 'sent' }).count<{ n: string }[]>('* as n');
        return Number(rows[0]!.n) === CARDS;
      },
      180_000,
      200,
    );
    // Counted once the killed workers' jobs ran again (BullMQ's stalled-job check) and the shipping sweep twice more.
    await waitQueuesIdle(env, ['card-timers', 'shipments'], { sweeps: ['shipments'] });
    expect(kills).toBe(3);
    for (let i = 0; i < CARDS; i++) {
      const mine = bridge.shipments.filter((s) => s.body.to === `https://www.linkedin.com/in/lead-${i}`);
      expect(mine, `lead-${i}`).toHaveLength(1);
    }
    const fences = await env.deps.db('shipments').where({ account_id: accountId });
    expect(fences).toHaveLength(CARDS);
    expect(fences.every((f) => f.status === 'sent')).toBe(true);
    // Kills landed mid-ship (the bridge had taken it, its answer was on the way): reconciliation settled those.
    expect(fences.filter((f) => f.reconcile_until !== null).length).toBeGreaterThan(0);
    const events = await env.deps.db('channel_events').where({ account_id: accountId, channel: 'network', type: 'message_sent' });
    expect(events).toHaveLength(CARDS);
    expect(new Set(events.map((e) => e.decided_by))).toEqual(new Set(['trust_ladder']));
  }, 300_000);
});
