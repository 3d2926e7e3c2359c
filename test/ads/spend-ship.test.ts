import { describe, expect } from 'vitest';
import { monthStart } from '../../src/channels/spend-cap.js';
import { newId } from '../../src/ids.js';
import { needsApproval, shipBySetting } from '../../src/review/approval.service.js';
import { createCard } from '../helpers/cards.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { adminCall } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import type { TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { BRIDGE_SHIP_ENV, connectedTenant, withBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { approveCard } from '../helpers/approve.js';
import { cardRow, row, rows } from '../helpers/rows.js';
import { backdate } from '../helpers/row-setup.js';

const it = withBridge('ads_live_SECRET_77');

it.override('options', {
  env: BRIDGE_SHIP_ENV,
  pools: ['shipments'],
});

async function connected(env: TestEnv, bridge: ProviderBridgeStandIn, cap: number | null = 100_000) {
  const t = await connectedTenant(env, bridge, 'ads');
  if (cap !== null) {
    const out = await adminCall(env, ['channel', 'spend-cap', '--account', t.accountId, '--monthly-cap', String(cap), '--currency', 'usd']);
    expect(out).toEqual({ out: { accountId: t.accountId, monthlyCap: cap, currency: 'USD' } });
  }
  return t;
}

const change = (amount: number, currency = 'USD') => ({ channel: 'ads', currency, period: 'day', from: 4000, to: 4000 + amount, amount });
const budgetCard = (env: TestEnv, accountId: string, amount: number, currency = 'USD') =>
  buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'budget_change',
    title: 'Raise the search ads budget',
    payload: { work: 'spend' },
    budgetChange: change(amount, currency),
  });
const fencesOf = (env: TestEnv, cardId: string) => rows(env, 'shipments', { card_id: cardId });
const spendEvents = (env: TestEnv, accountId: string) =>
  rows(env, 'channel_events', { account_id: accountId, channel: 'ads', type: 'budget_change' }).select('amount', 'decided_by');

describe('budget changes (spend) through the provider bridge', () => {
  it('applies an approved change once, shipping kind spend with it, and counts ads budget_change with the change', async ({
    bridge,
    env,
  }) => {
    bridge.state.mode = 'accept';
    const { accountId, token } = await connected(env, bridge);
    const card = await budgetCard(env, accountId, 2500);
    expect((await approveCard(env, token, card.id)).status).toBe(200);
    const [fence] = await fencesOf(env, card.id);
    const posts = bridge.posts.filter((p) => p.key === fence.idempotency_key);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.body).toMatchObject({ kind: 'spend', to: null, details: { ...change(2500), accountId } });
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'sent' });
    expect((await spendEvents(env, accountId)).map((e) => ({ amount: Number(e.amount), by: e.decided_by }))).toEqual([
      { amount: 2500, by: 'person' },
    ]);
  });

  it('applies a change two people approve at the same moment exactly once', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await budgetCard(env, accountId, 1000);
    const [a, b] = await Promise.all([approveCard(env, token, card.id), approveCard(env, token, card.id)]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const fences = await fencesOf(env, card.id);
    expect(fences).toHaveLength(1);
    expect(bridge.posts.filter((p) => p.key === fences[0].idempotency_key)).toHaveLength(1);
    expect(await spendEvents(env, accountId)).toHaveLength(1);
  });

  it('refuses a change that would pass the monthly cap, naming the cap and what is left; nothing shipped', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge, 10_000);
    const first = await budgetCard(env, accountId, 6000);
    expect((await approveCard(env, token, first.id)).status).toBe(200);
    const before = bridge.posts.length;
    const over = await budgetCard(env, accountId, 5000);
    const res = await approveCard(env, token, over.id);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: 'rejected',
      message:
        'this budget change (+50.00 USD) would pass the monthly spend cap of 100.00 USD: 40.00 USD is left this month; nothing was applied',
      monthlyCap: 10_000,
      left: 4000,
    });
    expect(await fencesOf(env, over.id)).toHaveLength(0);
    expect(await cardRow(env, over.id)).toMatchObject({ status: 'pending' });
    expect(bridge.posts.length).toBe(before);
    // What is left still passes; a decrease always does.
    expect((await approveCard(env, token, (await budgetCard(env, accountId, 4000)).id)).status).toBe(200);
    expect((await approveCard(env, token, (await budgetCard(env, accountId, -3000)).id)).status).toBe(200);
    // Last month's increases do not count this month.
    await backdate(env, 'shipments', { account_id: accountId }, { created_at: monthStart(Date.now()) - 1 });
    expect((await approveCard(env, token, over.id)).status).toBe(200);
  });

  it('checks the cap in the fence transaction: two different changes approved at once cannot both pass it', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge, 10_000);
    const a = await budgetCard(env, accountId, 7000);
    const b = await budgetCard(env, accountId, 7000);
    const res = await Promise.all([approveCard(env, token, a.id), approveCard(env, token, b.id)]);
    expect(res.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await spendEvents(env, accountId)).toHaveLength(1);
  });

  it('counts a change whose answer was lost against the cap, and reconciliation settles it by lookup without a second ship', async ({
    env,
    bridge,
  }) => {
    const { accountId, token } = await connected(env, bridge, 10_000);
    const card = await budgetCard(env, accountId, 8000);
    bridge.state.mode = 'drop-after';
    const res = await approveCard(env, token, card.id);
    bridge.state.mode = 'accept';
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'delivery_pending' });
    // In flight: already counted, so another 3000 would pass the cap.
    const more = await approveCard(env, token, (await budgetCard(env, accountId, 3000)).id);
    expect(more.status).toBe(409);
    expect(more.body).toMatchObject({ left: 2000 });
    await until(async () => (await cardRow(env, card.id))?.status === 'sent', 20_000);
    const [fence] = await fencesOf(env, card.id);
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
    expect(await spendEvents(env, accountId)).toHaveLength(1);
  });

  it('asks a person whether the change was applied when the bridge cannot tell; it counts against the cap until they say no', async ({
    env,
    bridge,
  }) => {
    const { accountId, token } = await connected(env, bridge, 10_000);
    const card = await budgetCard(env, accountId, 8000);
    bridge.state.mode = 'drop-after';
    bridge.state.lookupStatus = 500;
    try {
      expect((await approveCard(env, token, card.id)).status).toBe(503);
      const question = await until(
        async () => row(env, 'review_cards', { account_id: accountId, source_type: 'mail_delivery_unknown' }),
        20_000,
      );
      expect(question.title).toBe('Was the budget change "Raise the search ads budget" applied?');
      expect(question.prompt).toMatch(/^The ad platform took this budget change but never confirmed it, and it cannot be asked\. /);
      expect(question.prompt).toContain("Check the ad account's budget history");
      expect(question.prompt).toContain('Until you answer, the change counts against the monthly spend cap.');
      expect(question.prompt).not.toContain('sent folder');
      expect(question.options.map((o: { label: string }) => o.label)).toEqual([
        'It was applied: mark the card sent',
        'It was not applied: put the card back so it can be approved again',
      ]);
      bridge.state.mode = 'accept';
      // Unanswered, the change still counts: another 3000 would pass the cap.
      expect((await approveCard(env, token, (await budgetCard(env, accountId, 3000)).id)).body).toMatchObject({ left: 2000 });
      const res = await env
        .api()
        .post(`/api/v1/review/${question.id}/answer`)
        .set(auth(token))
        .send({ action: 'choose', optionValues: ['mark_not_sent'] });
      expect(res.status).toBe(200);
    } finally {
      bridge.state.mode = 'accept';
      bridge.state.lookupStatus = 0;
    }
    // Not applied: the card waits for a person again and the whole cap is back.
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'pending' });
    expect(await spendEvents(env, accountId)).toEqual([]);
    expect((await approveCard(env, token, (await budgetCard(env, accountId, 10_000)).id)).status).toBe(200);
  });

  it('gives a refused change back to the person: 503 for now, 409 for good; nothing counted against the cap', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge, 10_000);
    const card = await budgetCard(env, accountId, 9000);
    bridge.state.mode = 'refuse';
    const now = await approveCard(env, token, card.id);
    expect(now.status).toBe(503);
    expect(now.body.error).toBe('unavailable');
    bridge.state.mode = 'reject';
    const never = await approveCard(env, token, card.id);
    bridge.state.mode = 'accept';
    expect(never.status).toBe(409);
    expect((await cardRow(env, card.id)).status).toBe('pending');
    expect(await spendEvents(env, accountId)).toEqual([]);
    // Both tries are void: the whole cap is still there for it.
    expect((await approveCard(env, token, card.id)).status).toBe(200);
    expect(await spendEvents(env, accountId)).toHaveLength(1);
  });

  it('refuses without a cap, in another or a malformed currency, or with no amount; nothing written', async ({ env, bridge }) => {
    const none = await connected(env, bridge, null);
    const res = await approveCard(env, none.token, (await budgetCard(env, none.accountId, 100)).id);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/no monthly spend cap is set on this account; the operator sets one \(channel spend-cap\)/);
    const { accountId, token } = await connected(env, bridge);
    const eur = await approveCard(env, token, (await budgetCard(env, accountId, 100, 'EUR')).id);
    expect(eur.body.message).toBe('this budget change is in EUR but the monthly spend cap is in USD; nothing was applied');
    const odd = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'x',
      budgetChange: { amount: 100, currency: 'dollars' },
    });
    const r = await approveCard(env, token, odd.id);
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(
      'this budget change cannot be applied: its currency must be a three-letter ISO 4217 code; request changes so the agent fixes it',
    );
    const zero = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'x',
      budgetChange: { amount: 0 },
    });
    expect((await approveCard(env, token, zero.id)).body.message).toMatch(/its amount must be a whole number of minor currency units/);
    expect(await rows(env, 'shipments').whereIn('account_id', [accountId, none.accountId])).toHaveLength(0);
    // A change naming no currency (the agent's ship tool gives only an amount) is in the cap's.
    const bare = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'x',
      budgetChange: { amount: 100 },
    });
    expect((await approveCard(env, token, bare.id)).status).toBe(200);
    const [fence] = await fencesOf(env, bare.id);
    expect(bridge.posts.find((p) => p.key === fence.idempotency_key)?.body.details).toMatchObject({ amount: 100, currency: 'USD' });
  });

  it('always waits for a person: no setting, trust level or tool frees it', async ({ env, bridge }) => {
    const { accountId } = await connected(env, bridge);
    expect(await needsApproval(env.deps.db, accountId, 'spend')).toBe(true);
    const set = await adminCall(env, ['settings', 'set', '--account', accountId, '--kind', 'spend', '--approval', 'auto']);
    expect(set).toEqual({ error: 'spending always waits for a person; --kind spend cannot be auto' });
    for (let i = 0; i < 10; i++) await raiseTrust(env.deps.db, accountId, 'spend');
    const card = await createCard(env.deps, {
      id: newId('card'),
      accountId,
      kind: 'approval',
      sourceType: 'budget_change',
      title: 'More budget',
      budgetChange: change(100),
      payload: { work: 'spend' },
      actions: [],
      primaryLabel: '',
    });
    expect(card.autoResolveAt).toBeNull();
    const tool = { id: newId('card'), accountId, kind: 'approval' as const, sourceType: 'budget_change', title: 't', payload: {} };
    await expect(
      shipBySetting(env.deps.db, { ...tool, budgetChange: change(100), actions: [], primaryLabel: '' }, env.deps.readTurn),
    ).rejects.toThrow('spending always waits for a person');
  });

  it('refuses bad spend-cap input with one line naming the flag and the rule', async ({ env }) => {
    const { accountId } = await env.tenant();
    const base = ['channel', 'spend-cap', '--account', accountId];
    expect(await adminCall(env, [...base, '--monthly-cap', '0', '--currency', 'USD'])).toEqual({
      error: '--monthly-cap must be a whole number of minor currency units (cents), 1 to 1000000000000',
    });
    expect(await adminCall(env, [...base, '--monthly-cap', '12.5', '--currency', 'USD'])).toMatchObject({ error: /--monthly-cap/ });
    expect(await adminCall(env, [...base, '--monthly-cap', '100', '--currency', 'dollars'])).toEqual({
      error: '--currency must be a three-letter ISO 4217 code (USD, EUR, …)',
    });
    expect(await adminCall(env, [...base, '--monthly-cap', '100'])).toMatchObject({ error: expect.stringMatching(/currency/) });
    const audit = await rows(env, 'audit_log', { account_id: accountId, route: 'channel spend-cap' });
    expect(audit).toHaveLength(0);
  });
});
