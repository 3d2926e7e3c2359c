import { afterAll, beforeAll, describe, expect } from 'vitest';
import { monthStart } from '../../src/channels/spend-cap.js';
import { newId } from '../../src/ids.js';
import { needsApproval, shipBySetting } from '../../src/review/approval.service.js';
import { createCard } from '../helpers/cards.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { adminCall } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { BRIDGE_SHIP_ENV, connectedTenant, startProviderBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { cardRow, row, rows } from '../helpers/rows.js';

let env: TestEnv;
let bridge: ProviderBridgeStandIn;

it.override('options', {
  env: BRIDGE_SHIP_ENV,
  pools: ['shipments'],
});
it.beforeAll(({ env: e }) => {
  env = e;
});
beforeAll(async () => {
  bridge = await startProviderBridge('ads_live_SECRET_77');
});
afterAll(async () => {
  await bridge.close();
});

async function connected(cap: number | null = 100_000) {
  const t = await connectedTenant(env, bridge, 'ads');
  if (cap !== null) {
    const out = await adminCall(env, ['channel', 'spend-cap', '--account', t.accountId, '--monthly-cap', String(cap), '--currency', 'usd']);
    expect(out).toEqual({ out: { accountId: t.accountId, monthlyCap: cap, currency: 'USD' } });
  }
  return t;
}

const change = (amount: number, currency = 'USD') => ({ channel: 'ads', currency, period: 'day', from: 4000, to: 4000 + amount, amount });
const budgetCard = (accountId: string, amount: number, currency = 'USD') =>
  buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'budget_change',
    title: 'Raise the search ads budget',
    payload: { work: 'spend' },
    budgetChange: change(amount, currency),
  });
const approve = (token: string, cardId: string) =>
  env.api().post(`/api/v1/review/${cardId}/answer`).set(auth(token)).send({ action: 'approve' });
const cardOf = (cardId: string) => cardRow(env, cardId);
const fencesOf = (cardId: string) => rows(env, 'shipments', { card_id: cardId });
const spendEvents = (accountId: string) =>
  env.deps.db('channel_events').where({ account_id: accountId, channel: 'ads', type: 'budget_change' }).select('amount', 'decided_by');

describe('budget changes (spend) through the provider bridge', () => {
  it('applies an approved change once, shipping kind spend with it, and counts ads budget_change with the change', async () => {
    bridge.state.mode = 'accept';
    const { accountId, token } = await connected();
    const card = await budgetCard(accountId, 2500);
    expect((await approve(token, card.id)).status).toBe(200);
    const [fence] = await fencesOf(card.id);
    const posts = bridge.posts.filter((p) => p.key === fence.idempotency_key);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.body).toMatchObject({ kind: 'spend', to: null, details: { ...change(2500), accountId } });
    expect(await cardOf(card.id)).toMatchObject({ status: 'sent' });
    expect((await spendEvents(accountId)).map((e) => ({ amount: Number(e.amount), by: e.decided_by }))).toEqual([
      { amount: 2500, by: 'person' },
    ]);
  });

  it('applies a change two people approve at the same moment exactly once', async () => {
    const { accountId, token } = await connected();
    const card = await budgetCard(accountId, 1000);
    const [a, b] = await Promise.all([approve(token, card.id), approve(token, card.id)]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const fences = await fencesOf(card.id);
    expect(fences).toHaveLength(1);
    expect(bridge.posts.filter((p) => p.key === fences[0].idempotency_key)).toHaveLength(1);
    expect(await spendEvents(accountId)).toHaveLength(1);
  });

  it('refuses a change that would pass the monthly cap, naming the cap and what is left; nothing shipped', async () => {
    const { accountId, token } = await connected(10_000);
    const first = await budgetCard(accountId, 6000);
    expect((await approve(token, first.id)).status).toBe(200);
    const before = bridge.posts.length;
    const over = await budgetCard(accountId, 5000);
    const res = await approve(token, over.id);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: 'rejected',
      message:
        'this budget change (+50.00 USD) would pass the monthly spend cap of 100.00 USD: 40.00 USD is left this month; nothing was applied',
      monthlyCap: 10_000,
      left: 4000,
    });
    expect(await fencesOf(over.id)).toHaveLength(0);
    expect(await cardOf(over.id)).toMatchObject({ status: 'pending' });
    expect(bridge.posts.length).toBe(before);
    // What is left still passes; a decrease always does.
    expect((await approve(token, (await budgetCard(accountId, 4000)).id)).status).toBe(200);
    expect((await approve(token, (await budgetCard(accountId, -3000)).id)).status).toBe(200);
    // Last month's increases do not count this month.
    await env.deps
      .db('shipments')
      .where({ account_id: accountId })
      .update({ created_at: monthStart(Date.now()) - 1 });
    expect((await approve(token, over.id)).status).toBe(200);
  });

  it('checks the cap in the fence transaction: two different changes approved at once cannot both pass it', async () => {
    const { accountId, token } = await connected(10_000);
    const a = await budgetCard(accountId, 7000);
    const b = await budgetCard(accountId, 7000);
    const res = await Promise.all([approve(token, a.id), approve(token, b.id)]);
    expect(res.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await spendEvents(accountId)).toHaveLength(1);
  });

  it('counts a change whose answer was lost against the cap, and reconciliation settles it by lookup without a second ship', async () => {
    const { accountId, token } = await connected(10_000);
    const card = await budgetCard(accountId, 8000);
    bridge.state.mode = 'drop-after';
    const res = await approve(token, card.id);
    bridge.state.mode = 'accept';
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'delivery_pending' });
    // In flight: already counted, so another 3000 would pass the cap.
    const more = await approve(token, (await budgetCard(accountId, 3000)).id);
    expect(more.status).toBe(409);
    expect(more.body).toMatchObject({ left: 2000 });
    await until(async () => (await cardOf(card.id))?.status === 'sent', 20_000);
    const [fence] = await fencesOf(card.id);
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
    expect(await spendEvents(accountId)).toHaveLength(1);
  });

  it('asks a person whether the change was applied when the bridge cannot tell; it counts against the cap until they say no', async () => {
    const { accountId, token } = await connected(10_000);
    const card = await budgetCard(accountId, 8000);
    bridge.state.mode = 'drop-after';
    bridge.state.lookupStatus = 500;
    try {
      expect((await approve(token, card.id)).status).toBe(503);
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
      expect((await approve(token, (await budgetCard(accountId, 3000)).id)).body).toMatchObject({ left: 2000 });
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
    expect(await cardOf(card.id)).toMatchObject({ status: 'pending' });
    expect(await spendEvents(accountId)).toEqual([]);
    expect((await approve(token, (await budgetCard(accountId, 10_000)).id)).status).toBe(200);
  });

  it('gives a refused change back to the person: 503 for now, 409 for good; nothing counted against the cap', async () => {
    const { accountId, token } = await connected(10_000);
    const card = await budgetCard(accountId, 9000);
    bridge.state.mode = 'refuse';
    const now = await approve(token, card.id);
    expect(now.status).toBe(503);
    expect(now.body.error).toBe('unavailable');
    bridge.state.mode = 'reject';
    const never = await approve(token, card.id);
    bridge.state.mode = 'accept';
    expect(never.status).toBe(409);
    expect((await cardOf(card.id)).status).toBe('pending');
    expect(await spendEvents(accountId)).toEqual([]);
    // Both tries are void: the whole cap is still there for it.
    expect((await approve(token, card.id)).status).toBe(200);
    expect(await spendEvents(accountId)).toHaveLength(1);
  });

  it('refuses without a cap, in another or a malformed currency, or with no amount; nothing written', async () => {
    const none = await connected(null);
    const res = await approve(none.token, (await budgetCard(none.accountId, 100)).id);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/no monthly spend cap is set on this account; the operator sets one \(channel spend-cap\)/);
    const { accountId, token } = await connected();
    const eur = await approve(token, (await budgetCard(accountId, 100, 'EUR')).id);
    expect(eur.body.message).toBe('this budget change is in EUR but the monthly spend cap is in USD; nothing was applied');
    const odd = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'x',
      budgetChange: { amount: 100, currency: 'dollars' },
    });
    const r = await approve(token, odd.id);
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(
      'this budget change cannot be applied: its currency must be a three-letter ISO 4217 code; request changes so the agent fixes it',
    );
    const zero = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'x',
      budgetChange: { amount: 0 },
    });
    expect((await approve(token, zero.id)).body.message).toMatch(/its amount must be a whole number of minor currency units/);
    expect(await env.deps.db('shipments').whereIn('account_id', [accountId, none.accountId])).toHaveLength(0);
    // A change naming no currency (the agent's ship tool gives only an amount) is in the cap's.
    const bare = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'budget_change',
      title: 'x',
      budgetChange: { amount: 100 },
    });
    expect((await approve(token, bare.id)).status).toBe(200);
    const [fence] = await fencesOf(bare.id);
    expect(bridge.posts.find((p) => p.key === fence.idempotency_key)?.body.details).toMatchObject({ amount: 100, currency: 'USD' });
  });

  it('always waits for a person: no setting, trust level or tool frees it', async () => {
    const { accountId } = await connected();
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

  it('refuses bad spend-cap input with one line naming the flag and the rule', async () => {
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
