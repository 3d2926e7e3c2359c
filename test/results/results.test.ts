import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { connectChannel, recordChannelEvent } from '../../src/results/channel-events.js';
import { NO_MAIL_SENT, NO_MEASUREMENT } from '../../src/results/report/results.service.js';
import { getResults } from '../helpers/scoreboard.js';
import { mintToken, revokeToken } from '../../src/tokens/tokens.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

let env: TestEnv;
it.beforeAll(({ env: e }) => {
  env = e;
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function results(token: string, query: Record<string, string | number> = {}) {
  return env.api().get('/api/v1/results').query(query).set(auth(token));
}

describe('GET /results window', () => {
  it('clamps since to between seven days and one hour ago, defaults to 24 hours, and reports the baseline', async () => {
    const { token } = await env.tenant(['results:read']);
    const cases: Array<[number | undefined, number, boolean]> = [
      [undefined, DAY, false],
      [Date.now() - 30 * DAY, 7 * DAY, true],
      [0, 7 * DAY, true],
      [Date.now() + DAY, HOUR, true],
      [Date.now() - 10 * 60_000, HOUR, true],
      [Date.now() - 3 * HOUR, 3 * HOUR, false],
    ];
    for (const [since, span, clamped] of cases) {
      const res = await results(token, since === undefined ? {} : { since });
      expect(res.status).toBe(200);
      const { window, baseline } = ResultsResponse.parse(res.body).results;
      expect(Math.abs(window.until - window.since - span), String(since)).toBeLessThan(2_000);
      expect(window.clamped).toBe(clamped);
      expect(window.requestedSince).toBe(since ?? null);
      expect(baseline).toEqual({ since: window.since - (window.until - window.since), until: window.since });
    }
  });

  it('clamps exactly at the edges', async () => {
    const { accountId } = await env.tenant();
    const now = 1_800_000_000_000;
    const at = async (since: number) => (await getResults(env.deps.db, accountId, since, now)).window;
    expect(await at(now - 7 * DAY)).toMatchObject({ since: now - 7 * DAY, clamped: false });
    expect(await at(now - 7 * DAY - 1)).toMatchObject({ since: now - 7 * DAY, clamped: true });
    expect(await at(now - HOUR)).toMatchObject({ since: now - HOUR, clamped: false });
    expect(await at(now - HOUR + 1)).toMatchObject({ since: now - HOUR, clamped: true });
  });

  it('answers 400 naming since when it is not an integer, and 403 without results:read', async () => {
    const { token } = await env.tenant();
    for (const since of ['yesterday', '-5', '1.5']) {
      const res = await results(token, { since });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'since must be an integer (epoch milliseconds)' });
    }
    const reader = await env.tenant(['leads:read']);
    const denied = await results(reader.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden', requiredScope: 'results:read' });
  });
});

describe('GET /results channels', () => {
  it('says not connected for a channel with nothing, and 0 (not null) for a connected channel where nothing happened', async () => {
    const { token, accountId } = await env.tenant(['results:read']);
    await connectChannel(env.deps.db, accountId, 'email');
    const r = ResultsResponse.parse((await results(token)).body).results;
    for (const channel of ['ads', 'network'] as const) {
      expect(r[channel]).toEqual({ available: false, reason: 'not connected' });
    }
    // The agent's own work is always reported (test/results/harness.test.ts).
    expect(r.harness.available).toBe(true);
    // Visits and conversions come from a measurement source: none yet (no measurement:write token, no post).
    for (const channel of ['seo', 'social', 'aeo'] as const) expect(r[channel]).toEqual({ available: false, reason: NO_MEASUREMENT });
    expect(r.email.available).toBe(true);
    if (!r.email.available) return;
    expect(r.email.data.window).toEqual({
      sent: 0,
      replies: 0,
      positiveReplies: 0,
      bounces: 0,
      delayed: 0,
      unsubscribes: 0,
      optOuts: 0,
      replyRate: null,
      clicks: 0,
      scannerClicks: 0,
      conversions: 0,
      conversionValue: {},
      shipped: { total: 0, byPerson: 0, byTrustLadder: 0, bySetting: 0, unattributed: 0 },
    });
  });

  it('reports seo, social and aeo with zeros once a measurement:write token exists, and not after it is revoked', async () => {
    const { token, accountId } = await env.tenant(['results:read']);
    const site = await mintToken(env.deps.db, env.deps.config.tokenPrefix, { accountId, label: 'website', scopes: ['measurement:write'] });
    const r = ResultsResponse.parse((await results(token)).body).results;
    const zeros = { visits: 0, scannerClicks: 0, conversions: 0, conversionValue: {} };
    expect(r.seo).toMatchObject({ available: true, data: { window: { postsPublished: 0, ...zeros }, baseline: zeros } });
    expect(r.social).toMatchObject({ available: true, data: { window: { engagements: 0, ...zeros } } });
    expect(r.aeo).toMatchObject({ available: true, data: { window: { citations: 0, ...zeros } } });
    await revokeToken(env.deps, site.tokenId);
    const after = ResultsResponse.parse((await results(token)).body).results;
    expect(after.seo).toEqual({ available: false, reason: NO_MEASUREMENT });
  });

  it('counts the window and the baseline apart, and splits shipped work by who decided it', async () => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    const now = Date.now();
    const since = now - 2 * HOUR;
    const send = (at: number, decidedBy: 'person' | 'trust_ladder' | 'setting' | null, ref: string) =>
      recordChannelEvent(db, accountId, { channel: 'email', type: 'sent', at, decidedBy, refId: ref });
    await send(since, 'person', 's1');
    await send(now - HOUR, 'person', 's2');
    await send(now - HOUR, 'trust_ladder', 's3');
    await send(now - 30 * 60_000, 'setting', 's4');
    await send(now - 20 * 60_000, null, 's5');
    await send(since - 1, 'person', 'b1');
    await send(since - 2 * HOUR, 'setting', 'b2');
    await send(since - 2 * HOUR - 1, 'setting', 'too-old');
    await recordChannelEvent(db, accountId, { channel: 'email', type: 'reply', at: now - 10 * 60_000, refId: 'r1' });
    await send(now - HOUR, 'person', 's2');
    const r = await getResults(db, accountId, since, now);
    expect(r.email.available).toBe(true);
    if (!r.email.available) return;
    expect(r.email.data.window).toMatchObject({
      sent: 5,
      replies: 1,
      replyRate: 0.2,
      shipped: { total: 5, byPerson: 2, byTrustLadder: 1, bySetting: 1, unattributed: 1 },
    });
    expect(r.email.data.baseline).toMatchObject({ sent: 2, replies: 0, replyRate: 0, shipped: { total: 2, byPerson: 1, bySetting: 1 } });
  });

  it('reports spend as 0 when there was none and null when a spend of unknown amount happened', async () => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    const now = Date.now();
    await recordChannelEvent(db, accountId, { channel: 'ads', type: 'click', at: now - 3 * DAY });
    const none = await getResults(db, accountId, undefined, now);
    expect(none.ads.available && none.ads.data.window).toMatchObject({ spend: 0, conversions: 0, costPerConversion: null, clicks: 0 });
    expect(none.ads.available && none.ads.data.baseline).toMatchObject({ clicks: 0 });
    await recordChannelEvent(db, accountId, { channel: 'ads', type: 'spend', at: now - HOUR, amount: 1_500, decidedBy: 'person' });
    await recordChannelEvent(db, accountId, { channel: 'ads', type: 'conversion', at: now - HOUR });
    const known = await getResults(db, accountId, undefined, now);
    expect(known.ads.available && known.ads.data.window).toMatchObject({ spend: 1_500, conversions: 1, costPerConversion: 1_500 });
    await recordChannelEvent(db, accountId, { channel: 'ads', type: 'spend', at: now - HOUR, amount: null, decidedBy: 'person' });
    const unknown = await getResults(db, accountId, undefined, now);
    expect(unknown.ads.available && unknown.ads.data.window).toMatchObject({ spend: null, costPerConversion: null });
  });

  it('says why email is not available before the first send (there is nothing to connect), and counts from that send', async () => {
    const { token, accountId } = await env.tenant(['results:read']);
    const before = ResultsResponse.parse((await results(token)).body).results;
    expect(before.email).toEqual({ available: false, reason: NO_MAIL_SENT });
    await recordChannelEvent(env.deps.db, accountId, { channel: 'email', type: 'sent', at: Date.now() - HOUR, decidedBy: 'person' });
    const after = ResultsResponse.parse((await results(token)).body).results;
    expect(after.email.available && after.email.data.window.sent).toBe(1);
  });

  it("keeps each account's events to itself", async () => {
    const a = await env.tenant();
    const b = await env.tenant();
    await recordChannelEvent(env.deps.db, a.accountId, {
      channel: 'network',
      type: 'message_sent',
      at: Date.now() - HOUR,
      decidedBy: 'person',
    });
    const rb = ResultsResponse.parse((await results(b.token)).body).results;
    expect(rb.network).toEqual({ available: false, reason: 'not connected' });
    const ra = ResultsResponse.parse((await results(a.token)).body).results;
    expect(ra.network.available && ra.network.data.window.messagesSent).toBe(1);
  });

  it('refuses an event type the channel does not have', async () => {
    const { accountId } = await env.tenant();
    await expect(recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'sent', at: Date.now() })).rejects.toThrow(
      /no event type sent/,
    );
  });

  it('counts visits, scanner clicks, conversions per channel; value per currency; window and baseline apart', async () => {
    const { accountId } = await env.tenant(['results:read']);
    const db = env.deps.db;
    const now = Date.now();
    const since = now - 2 * HOUR;
    const ev = (channel: 'email' | 'seo', type: string, at: number, refId: string) =>
      recordChannelEvent(db, accountId, { channel, type, at, refId });
    await ev('seo', 'visit', now - HOUR, 'v1');
    await ev('seo', 'visit', now - HOUR, 'v2');
    await ev('seo', 'scanner_click', now - HOUR, 'v3');
    await ev('seo', 'visit', since - HOUR, 'v4');
    await ev('email', 'visit', now - HOUR, 'v5');
    const conversion = (eventId: string, channel: string, at: number, value: number | null, currency: string | null) => ({
      account_id: accountId,
      event_id: eventId,
      name: 'purchase',
      value,
      currency,
      occurred_at: at,
      received_at: at,
      channel,
      aggregated_at: at,
    });
    await db('conversions').insert([
      conversion('e1', 'seo', now - HOUR, 100.25, 'USD'),
      conversion('e2', 'seo', now - HOUR, 20, 'EUR'),
      conversion('e3', 'seo', now - HOUR, 0.5, 'USD'),
      conversion('e4', 'seo', since - HOUR, 7, 'USD'),
      conversion('e5', 'seo', now - HOUR, null, null),
    ]);
    // Not yet aggregated: not counted.
    await db('conversions').insert({ ...conversion('e6', 'seo', now - HOUR, 999, 'USD'), aggregated_at: null, channel: null });
    for (const [id, at] of [
      ['e1', now - HOUR],
      ['e2', now - HOUR],
      ['e3', now - HOUR],
      ['e4', since - HOUR],
      ['e5', now - HOUR],
    ] as const)
      await ev('seo', 'conversion', at, id);
    const r = await getResults(db, accountId, since, now);
    expect(r.seo).toMatchObject({
      available: true,
      data: {
        window: { visits: 2, scannerClicks: 1, conversions: 4, conversionValue: { USD: 100.75, EUR: 20 } },
        baseline: { visits: 1, scannerClicks: 0, conversions: 1, conversionValue: { USD: 7 } },
      },
    });
    expect(r.email).toMatchObject({ available: true, data: { window: { clicks: 1, conversions: 0, conversionValue: {} } } });
  });
});
