import { describe, expect } from 'vitest';
import { setSpendCap } from '../../src/channels/spend-cap.js';
import { cardAutoResolve } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import type { Card } from '../../src/review/cards/cards.repository.js';
import { auth } from '../helpers/auth.js';
import { envFor, type TestEnv } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { killFence } from '../helpers/kill-fence.js';
import { until } from '../helpers/processes.js';
import { connectedTenant, KILL_SHIP_ENV, type ProviderBridgeStandIn, withBridge } from '../helpers/provider-bridge.js';
import { QUICK_STALLS, waitQueuesIdle } from '../helpers/queues-idle.js';
import { countRows, rows } from '../helpers/rows.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';

/**
 * kill -9 of the process shipping ad tests and budget changes mid-ship, as network-kill.test.ts does for
 * network messages. Ad tests ship in the background (the trust ladder's deadlines, card-timers pool);
 * a budget change always waits for a person, so it ships in the API process that answers the approval.
 * Each is killed while the bridge holds a shipment it took, its answer not yet sent; the shipping sweep
 * of a second process (the shipments pool here) finds the fence the kill left `sending` and reconciles it
 * by lookup. The bridge must see one ship per idempotency key, every card must end `sent`, and the
 * monthly spend cap must count each change once.
 */
const shipEnv = { ...KILL_SHIP_ENV, ...QUICK_STALLS };

const it = withBridge();
// Reconciliation and the shipping sweep run here; the shipping itself in the processes that get killed.
it.override('options', { env: shipEnv, pools: ['shipments'] });

/** The bridge's shipments and POSTs under one key. */
const at = (bridge: ProviderBridgeStandIn, key: string) => ({
  shipments: bridge.shipments.filter((s) => s.key === key).length,
  posts: bridge.posts.filter((p) => p.key === key).length,
});

/** An API process of its own (the one a person's approval reaches), and its base URL. */
async function startApi(env: TestEnv, children: ServiceProcess[]): Promise<{ proc: ServiceProcess; url: string }> {
  const proc = startService(['api'], { ...envFor(env.config), ...shipEnv, PORT: '0', LOG_LEVEL: 'info' });
  children.push(proc);
  return { proc, url: `http://127.0.0.1:${await proc.port()}` };
}

describe('kill -9 of the process shipping ad tests and budget changes', () => {
  it('ships every ad test to the bridge exactly once across worker kills mid-ship, each card sent', async ({ env, bridge }) => {
    const CARDS = 16;
    const { accountId } = await connectedTenant(env, bridge, 'ads');
    const due = Date.now();
    const cards = [];
    for (let i = 0; i < CARDS; i++) {
      const card = await buildCard(env.deps.db, accountId, 'approval', {
        sourceType: 'ad_test',
        title: `Ad test ${i}`,
        payload: {
          work: 'ad_test',
          variants: [{ headline: `Headline ${i}`, body: 'Growth on autopilot' }],
          budgetCap: 5_000,
          currency: 'USD',
          durationDays: 7,
        },
        autoResolveAt: due,
      });
      cards.push(card);
    }
    bridge.state.delayMs = 80;
    const fence = killFence(env, 'card-timers', shipEnv);
    try {
      const worker = await fence.start();
      for (const card of cards) await enqueue(env.deps.queues, cardAutoResolve, { accountId, cardId: card.id, at: due });
      const ours = () => bridge.shipments.filter((s) => s.body.kind === 'ad_test' && s.body.details.accountId === accountId).length;
      const kills = await fence.killAt(worker, [4, 10], ours);
      await until(async () => (await countRows(env, 'review_cards', { account_id: accountId, status: 'sent' })) === CARDS, 180_000, 200);
      // Counted once the killed workers' jobs ran again (BullMQ's stalled-job check) and the shipping sweep twice more.
      await waitQueuesIdle(env, ['card-timers', 'shipments'], { sweeps: ['shipments'] });
      bridge.state.delayMs = 0;
      expect(kills).toBe(2);
    } finally {
      await fence.stopAll();
    }
    for (let i = 0; i < CARDS; i++) {
      const mine = bridge.shipments.filter((s) => s.body.kind === 'ad_test' && s.body.subject === `Ad test ${i}`);
      expect(mine, `ad test ${i}`).toHaveLength(1);
    }
    const fences = await rows(env, 'shipments', { account_id: accountId });
    expect(fences).toHaveLength(CARDS);
    expect(fences.every((f) => f.status === 'sent' && f.kind_of_work === 'ad_test')).toBe(true);
    for (const f of fences) expect(at(bridge, f.idempotency_key).shipments, f.id).toBe(1);
    // Kills landed mid-ship (the bridge had taken it, its answer was on the way): reconciliation settled those.
    expect(fences.filter((f) => f.reconcile_until !== null).length).toBeGreaterThan(0);
    const events = await rows(env, 'channel_events', { account_id: accountId, channel: 'ads', type: 'test_launched' });
    expect(events).toHaveLength(CARDS);
    expect(new Set(events.map((e) => e.decided_by))).toEqual(new Set(['trust_ladder']));
  }, 300_000);

  it('applies every budget change once across API kills mid-ship, each card sent, the cap counting each once', async ({
    env,
    bridge,
    onTestFinished,
  }) => {
    const CHANGES = 4;
    const AMOUNT = 1_500;
    const { accountId, token } = await connectedTenant(env, bridge, 'ads');
    // Exactly room for every change: one counted twice would make a later approval pass the cap.
    await setSpendCap(env.deps.db, accountId, String(CHANGES * AMOUNT), 'USD', Date.now());
    const cards: Card[] = [];
    for (let i = 0; i < CHANGES; i++) {
      cards.push(
        await buildCard(env.deps.db, accountId, 'approval', {
          sourceType: 'budget_change',
          title: `Budget change ${i}`,
          payload: { work: 'spend' },
          budgetChange: { channel: 'ads', currency: 'USD', period: 'day', from: null, to: null, amount: AMOUNT },
        }),
      );
    }
    const approve = (url: string, cardId: string) =>
      fetch(`${url}/api/v1/review/${cardId}/answer`, {
        method: 'POST',
        headers: { ...auth(token), 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'approve' }),
      });
    const taken = (title: string) => bridge.shipments.some((s) => s.body.kind === 'spend' && s.body.subject === title);
    const apis: ServiceProcess[] = [];
    onTestFinished(() => {
      for (const p of apis) p.child.kill('SIGKILL');
    });
    // A card-timers worker process beside the API processes: the decisions' follow-ups (event.deliver) run there,
    // and this file's in-process pools are the shipments' alone.
    const timers = killFence(env, 'card-timers', shipEnv);
    onTestFinished(() => timers.stopAll());
    await timers.start();
    let api = await startApi(env, apis);
    let kills = 0;
    for (const [i, card] of cards.entries()) {
      if (i % 2 === 1) {
        const res = await approve(api.url, card.id);
        expect(res.status, card.title).toBe(200);
        continue;
      }
      // The bridge takes it and holds its answer; the API process is killed before it arrives.
      bridge.state.delayMs = 60_000;
      const lost = approve(api.url, card.id).then(
        () => 'answered',
        () => 'connection lost',
      );
      await until(async () => taken(card.title), 30_000, 10);
      api.proc.child.kill('SIGKILL');
      kills++;
      await api.proc.ended;
      expect(await lost).toBe('connection lost');
      bridge.state.delayMs = 0;
      api = await startApi(env, apis);
    }
    expect(kills).toBe(CHANGES / 2);
    await until(
      async () => {
        const sent = await rows(env, 'review_cards', { status: 'sent' }).whereIn(
          'id',
          cards.map((c) => c.id),
        );
        return sent.length === CHANGES;
      },
      120_000,
      200,
    );
    await waitQueuesIdle(env, ['card-timers', 'shipments'], { sweeps: ['shipments'] });
    const fences = await rows(env, 'shipments', { account_id: accountId });
    expect(fences).toHaveLength(CHANGES);
    for (const f of fences) {
      expect(f, f.id).toMatchObject({ status: 'sent', kind_of_work: 'spend' });
      // One ship per key, never re-sent: the lookup found what the killed process had shipped.
      expect(at(bridge, f.idempotency_key), f.id).toEqual({ shipments: 1, posts: 1 });
    }
    expect(fences.filter((f) => f.reconcile_until !== null)).toHaveLength(CHANGES / 2);
    const applied = await rows(env, 'channel_events', { account_id: accountId, channel: 'ads', type: 'budget_change' });
    expect(applied.map((e) => Number(e.amount))).toEqual(Array(CHANGES).fill(AMOUNT));
    // The cap is used exactly once per change: nothing is left, and the next increase is refused.
    const more = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'One cent more',
      payload: { work: 'spend' },
      budgetChange: { amount: 1 },
    });
    const refused = await approve(api.url, more.id);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: 'rejected', monthlyCap: CHANGES * AMOUNT, used: CHANGES * AMOUNT, left: 0 });
  }, 300_000);
});
