import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { connectProvider } from '../../src/channels/connections.js';
import { pollProviderEvents } from '../../src/inbound/network-replies.service.js';
import { recordChannelEvent } from '../../src/results/channel-events.js';
import { buildCard } from '../helpers/factories.js';
import type { TestEnv } from '../helpers/fixture.js';
import { withBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { rows, sendOfCard } from '../helpers/rows.js';
import { overwrite } from '../helpers/row-setup.js';

const it = withBridge();

const connect = (env: TestEnv, bridge: ProviderBridgeStandIn, accountId: string) =>
  connectProvider(
    env.deps.db,
    env.config.sealing,
    { accountId, kind: 'ads', transport: 'http', url: bridge.url, key: bridge.key },
    Date.now(),
  );
const adsEvents = (env: TestEnv, accountId: string) =>
  rows(env, 'channel_events', { account_id: accountId, channel: 'ads' })
    .orderBy(['type', 'ref_id'])
    .select('type', 'amount', 'ref_id')
    .then((foundRows) => foundRows.map((r) => ({ ...r, amount: Number(r.amount) })));

describe('polling the ad platform', () => {
  it('turns ad_metrics into ads channel events and per-test rows, each event once, ignoring what it cannot read', async ({
    env,
    bridge,
  }) => {
    const { accountId } = await env.tenant();
    await connect(env, bridge, accountId);
    bridge.events.length = 0;
    const at = Date.now() - 60_000;
    bridge.events.push(
      {
        id: 'm1',
        type: 'ad_metrics',
        at,
        data: { testId: 'ad-1', variant: 'A', impressions: 1000, clicks: 40, spend: 1200, conversions: 3 },
      },
      { id: 'm2', type: 'ad_metrics', at, data: { testId: 'ad-1', variant: 'B', impressions: 500, clicks: 0, spend: 300 } },
      { id: 'm3', type: 'ad_metrics', at, data: { testId: 'ad-1', impressions: -5 } },
      { id: 'm4', type: 'ad_metrics', at, data: { impressions: 5 } },
      { id: 'm5', type: 'something_new', at, data: {} },
    );
    expect(await pollProviderEvents(env.deps, accountId, 'ads')).toEqual({ connected: true, events: 5, applied: 2, ignored: 3 });
    const expected = [
      { type: 'impression', amount: 1000, ref_id: 'ads-m1' },
      { type: 'impression', amount: 500, ref_id: 'ads-m2' },
      { type: 'platform_click', amount: 40, ref_id: 'ads-m1' },
      { type: 'platform_conversion', amount: 3, ref_id: 'ads-m1' },
      { type: 'spend', amount: 1200, ref_id: 'ads-m1' },
      { type: 'spend', amount: 300, ref_id: 'ads-m2' },
    ];
    expect(await adsEvents(env, accountId)).toEqual(expected);
    expect(await rows(env, 'ad_metrics', { account_id: accountId }).orderBy('event_id').pluck('variant')).toEqual(['A', 'B']);
    // A cursor lost (reset) reads them all again and counts nothing twice.
    await overwrite(env, 'provider_connections', { account_id: accountId, kind: 'ads' }, { poll_cursor: null });
    expect(await pollProviderEvents(env.deps, accountId, 'ads')).toMatchObject({ events: 5 });
    expect(await adsEvents(env, accountId)).toEqual(expected);
    expect(await rows(env, 'ad_metrics', { account_id: accountId })).toHaveLength(2);
  });

  it('shows on /results ads: spend, impressions, clicks, conversions and cost per conversion', async ({ env, bridge }) => {
    const { accountId, token } = await env.tenant(['results:read']);
    await connect(env, bridge, accountId);
    const read = async () => {
      const res = await env.api().get('/api/v1/results').set(auth(token));
      expect(res.status).toBe(200);
      return ResultsResponse.parse(res.body).results.ads;
    };
    expect(await read()).toMatchObject({
      available: true,
      data: { window: { spend: 0, impressions: 0, clicks: 0, conversions: 0, costPerConversion: null, budgetChanges: 0 } },
    });
    bridge.events.length = 0;
    const at = Date.now() - 60_000;
    bridge.events.push({
      id: 'r1',
      type: 'ad_metrics',
      at,
      data: { testId: 't', variant: 'A', impressions: 900, clicks: 30, spend: 4000, conversions: 1 },
    });
    await pollProviderEvents(env.deps, accountId, 'ads');
    // A conversion our own measurement attributed to ads, and an applied budget change, count beside them.
    await recordChannelEvent(env.deps.db, accountId, { channel: 'ads', type: 'conversion', at, refId: 'conv-1' });
    await recordChannelEvent(env.deps.db, accountId, { channel: 'ads', type: 'budget_change', at, amount: 2500, refId: 'send-1' });
    expect(await read()).toMatchObject({
      available: true,
      data: { window: { spend: 4000, impressions: 900, clicks: 30, conversions: 2, costPerConversion: 2000, budgetChanges: 1 } },
    });
  });

  it('shows each ad test that ran in the window on /results ads.tests, with the platform numbers per variant', async ({ env, bridge }) => {
    const { accountId, token } = await env.tenant();
    await connect(env, bridge, accountId);
    const card = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'ad_test',
      title: 'Two headlines',
      payload: { work: 'ad_test', variants: [{ headline: 'A', body: 'a' }], budgetCap: 5000, currency: 'EUR', durationDays: 7 },
    });
    const approved = await env.api().post(`/api/v1/review/${card.id}/answer`).set(auth(token)).send({
      action: 'approve',
    });
    expect(approved.status).toBe(200);
    const fence = await sendOfCard(env, card.id);
    const testId = fence.provider_id as string;
    bridge.events.length = 0;
    const at = Date.now() - 1000;
    bridge.events.push(
      { id: 'x1', type: 'ad_metrics', at, data: { testId, variant: 'A', impressions: 100, clicks: 10, spend: 900, conversions: 2 } },
      { id: 'x2', type: 'ad_metrics', at, data: { testId, variant: 'B', impressions: 50, clicks: 5, spend: 100 } },
      { id: 'x3', type: 'ad_metrics', at, data: { testId: 'another-account-test', impressions: 7 } },
    );
    await pollProviderEvents(env.deps, accountId, 'ads');
    const res = await env.api().get('/api/v1/results').set(auth(token));
    expect(res.status).toBe(200);
    const ads = ResultsResponse.parse(res.body).results.ads;
    if (!ads.available) throw new Error('ads should be available');
    expect(ads.data.window.tests).toEqual([
      {
        testId,
        cardId: card.id,
        title: 'Two headlines',
        currency: 'EUR',
        launchedAt: Number(fence.settled_at),
        endsAt: Number(fence.settled_at) + 7 * 24 * 60 * 60 * 1000,
        impressions: 150,
        clicks: 15,
        spend: 1000,
        conversions: 2,
        costPerConversion: 500,
        variants: [
          { variant: 'A', impressions: 100, clicks: 10, spend: 900, conversions: 2 },
          { variant: 'B', impressions: 50, clicks: 5, spend: 100, conversions: 0 },
        ],
      },
    ]);
    expect(ads.data.baseline.tests).toEqual([]);
    expect(ads.data.window).toMatchObject({ testsLaunched: 1, impressions: 157, spend: 1000 });
  });
});
