import { describe, expect } from 'vitest';
import { cardAutoResolve } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import { buildCard } from '../helpers/factories.js';
import { killFence } from '../helpers/kill-fence.js';
import { until } from '../helpers/processes.js';
import { connectedTenant, KILL_SHIP_ENV, withBridge } from '../helpers/provider-bridge.js';
import { QUICK_STALLS, waitQueuesIdle } from '../helpers/queues-idle.js';
import { countRows, rows } from '../helpers/rows.js';

/**
 * kill -9 of the worker that ships network messages (the trust ladder's deadlines, card-timers pool),
 * again and again, while 30 cards ship through a provider bridge that answers slowly. Every message must
 * reach the bridge exactly once: none twice (one fence per card, one key per fence), none lost (the
 * shipping sweep reconciles a fence a kill left `sending` by lookup; a job killed before its claim is run
 * again by BullMQ's stalled-job check), counted once that has happened and nothing is left queued.
 */
const CARDS = 30;

const shipEnv = { ...KILL_SHIP_ENV, ...QUICK_STALLS };

const it = withBridge();
// Reconciliation and the shipping sweep run here; the shipping itself in the worker that gets killed.
it.override('options', { env: shipEnv, pools: ['shipments'] });

describe('kill -9 of the worker shipping network messages', () => {
  it('ships every message to the bridge exactly once: none twice, none lost', async ({ env, bridge }) => {
    const { accountId } = await connectedTenant(env, bridge, 'network');
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
    const fence = killFence(env, 'card-timers', shipEnv);
    try {
      const worker = await fence.start();
      for (const card of cards) await enqueue(env.deps.queues, cardAutoResolve, { accountId, cardId: card.id, at });
      const kills = await fence.killAt(worker, [5, 12, 20], () => bridge.shipments.length);
      await until(async () => (await countRows(env, 'review_cards', { account_id: accountId, status: 'sent' })) === CARDS, 180_000, 200);
      // Counted once the killed workers' jobs ran again (BullMQ's stalled-job check) and the shipping sweep twice more.
      await waitQueuesIdle(env, ['card-timers', 'shipments'], { sweeps: ['shipments'] });
      expect(kills).toBe(3);
    } finally {
      await fence.stopAll();
    }
    for (let i = 0; i < CARDS; i++) {
      const mine = bridge.shipments.filter((s) => s.body.to === `https://www.linkedin.com/in/lead-${i}`);
      expect(mine, `lead-${i}`).toHaveLength(1);
    }
    const fences = await rows(env, 'shipments', { account_id: accountId });
    expect(fences).toHaveLength(CARDS);
    expect(fences.every((f) => f.status === 'sent')).toBe(true);
    // Kills landed mid-ship (the bridge had taken it, its answer was on the way): reconciliation settled those.
    expect(fences.filter((f) => f.reconcile_until !== null).length).toBeGreaterThan(0);
    const events = await rows(env, 'channel_events', { account_id: accountId, channel: 'network', type: 'message_sent' });
    expect(events).toHaveLength(CARDS);
    expect(new Set(events.map((e) => e.decided_by))).toEqual(new Set(['trust_ladder']));
  }, 300_000);
});
