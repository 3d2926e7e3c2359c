import { afterAll, describe, expect } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { buildCard } from '../helpers/factories.js';
import type { TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { BRIDGE_SHIP_ENV, capturedLines, connectedTenant, withBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { approveCard } from '../helpers/approve.js';
import { cardRow, row, rows, sendOfCard } from '../helpers/rows.js';

const it = withBridge('ads_live_SECRET_42');

const { lines, sink } = capturedLines();

it.override('options', {
  logger: createLogger('trace', sink),
  env: BRIDGE_SHIP_ENV,
  pools: ['shipments'],
});

const connected = (env: TestEnv, bridge: ProviderBridgeStandIn) => connectedTenant(env, bridge, 'ads');

const AD_TEST = {
  work: 'ad_test',
  variants: [
    { headline: 'Ship faster', body: 'Growth on autopilot', url: 'https://acme.test/a' },
    { headline: 'Grow today', body: 'An agent that ships' },
  ],
  budgetCap: 20_000,
  currency: 'USD',
  durationDays: 14,
};

const adCard = (env: TestEnv, accountId: string, payload: Record<string, unknown> = {}) =>
  buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'ad_test',
    title: 'Test two headlines',
    payload: { ...AD_TEST, ...payload },
  });
const adsEvents = (env: TestEnv, accountId: string) =>
  rows(env, 'channel_events', { account_id: accountId, channel: 'ads' }).orderBy('type').select('type', 'decided_by');

describe('ad tests through the provider bridge', () => {
  afterAll(() => {
    // Ships, a lost answer and its reconciliation logged at trace: the bridge key is in none of it.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain('ads_live_SECRET_42');
  });

  it('ships an approved ad test once under the fence key, with its variants, cap and duration', async ({ bridge, env }) => {
    bridge.state.mode = 'accept';
    const { accountId, token } = await connected(env, bridge);
    const card = await adCard(env, accountId);
    const res = await approveCard(env, token, card.id);
    expect(res.status).toBe(200);
    const fence = await sendOfCard(env, card.id);
    const tries = bridge.posts.filter((p) => p.key === fence.idempotency_key);
    expect(tries).toHaveLength(1);
    expect(tries[0]!.body).toEqual({
      kind: 'ad_test',
      to: null,
      subject: 'Test two headlines',
      body: '',
      details: {
        variants: [
          { headline: 'Ship faster', body: 'Growth on autopilot', url: 'https://acme.test/a' },
          { headline: 'Grow today', body: 'An agent that ships' },
        ],
        budgetCap: 20_000,
        currency: 'USD',
        durationDays: 14,
        accountId,
      },
    });
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'sent' });
    expect(fence).toMatchObject({ status: 'sent', kind_of_work: 'ad_test' });
    expect(await adsEvents(env, accountId)).toEqual([{ type: 'test_launched', decided_by: 'person' }]);
    expect((await approveCard(env, token, card.id)).status).toBe(409);
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
  });

  it('answers 503 delivery_pending when the answer is lost, and reconciliation settles it by lookup without a second ship', async ({
    env,
    bridge,
  }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await adCard(env, accountId);
    bridge.state.mode = 'drop-after';
    const res = await approveCard(env, token, card.id);
    bridge.state.mode = 'accept';
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'delivery_pending' });
    await until(async () => (await cardRow(env, card.id))?.status === 'sent', 20_000);
    const fence = await sendOfCard(env, card.id);
    expect(fence.status).toBe('sent');
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
    expect(bridge.shipments.filter((s) => s.key === fence.idempotency_key)).toHaveLength(1);
    expect(await adsEvents(env, accountId)).toEqual([{ type: 'test_launched', decided_by: 'person' }]);
  });

  it("asks a person whether the ad test was created when the bridge cannot tell, in the ad account's words", async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await adCard(env, accountId);
    bridge.state.mode = 'drop-after';
    bridge.state.lookupStatus = 500;
    try {
      expect((await approveCard(env, token, card.id)).status).toBe(503);
      const question = await until(
        async () => row(env, 'review_cards', { account_id: accountId, source_type: 'mail_delivery_unknown' }),
        20_000,
      );
      expect(question.title).toBe('Was the ad test "Test two headlines" created?');
      expect(question.prompt).toMatch(/^The ad platform took this ad test but never confirmed it, and it cannot be asked\. /);
      expect(question.prompt).toContain('Check the campaigns (and their ads) in the ad account for this test.');
      expect(question.prompt).not.toContain('sent folder');
      const res = await env
        .api()
        .post(`/api/v1/review/${question.id}/answer`)
        .set(auth(token))
        .send({ action: 'choose', optionValues: ['mark_sent'] });
      expect(res.status).toBe(200);
    } finally {
      bridge.state.mode = 'accept';
      bridge.state.lookupStatus = 0;
    }
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'sent' });
    const fence = await sendOfCard(env, card.id);
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
  });

  it('refuses with 409 naming the connection when the account has no ads connection, nothing written', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    const card = await adCard(env, accountId);
    const res = await approveCard(env, token, card.id);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'rejected', message: 'ad tests cannot ship: no ad-platform connection on this account' });
    expect(await sendOfCard(env, card.id)).toBeUndefined();
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'pending' });
  });

  it('refuses a malformed ad test with a clear 409 before any fence is written', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge);
    const cases: [Record<string, unknown>, string][] = [
      [{ variants: [] }, 'an ad test has 1 to 5 variants'],
      [{ variants: Array.from({ length: 6 }, () => ({ headline: 'h', body: 'b' })) }, 'an ad test has 1 to 5 variants'],
      [{ variants: [{ headline: 'h' }] }, 'variant 1 needs a headline and a body'],
      [{ variants: [{ headline: 'h', body: 'b', url: 'javascript:x' }] }, "variant 1's url must be an http(s) URL"],
      [{ budgetCap: 0 }, 'budgetCap must be a whole number of minor currency units (cents) above 0'],
      [{ budgetCap: 12.5 }, 'budgetCap must be a whole number of minor currency units (cents) above 0'],
      [{ currency: 'dollars' }, 'currency must be a three-letter ISO 4217 code'],
      [{ durationDays: 91 }, 'durationDays must be a whole number from 1 to 90'],
    ];
    const before = bridge.posts.length;
    for (const [payload, why] of cases) {
      const card = await adCard(env, accountId, payload);
      const res = await approveCard(env, token, card.id);
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(`this ad test cannot ship: ${why}; request changes so the agent fixes it`);
      expect(await sendOfCard(env, card.id)).toBeUndefined();
      expect(await cardRow(env, card.id)).toMatchObject({ status: 'pending' });
    }
    expect(bridge.posts.length).toBe(before);
  });
});
