import { describe, expect } from 'vitest';
import { EventsResponse } from '../../api/routes/measurement.schemas.js';
import { newId } from '../../src/ids.js';
import { aggregateOnce, sweepConversions } from '../../src/measurement/conversions.service.js';
import { trackedCodes } from '../../src/measurement/links.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { rows, row } from '../helpers/rows.js';

// POST /api/v1/measurement/events: per-event outcomes, durable before the answer, and aggregation by the
// real maintenance pool (last touch: the visit's channel).

const BASE = 'https://agent.example.test';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
it.override('options', { env: { BASE_URL: BASE, RATE_WRITES_BURST: '10000', RATE_ACCOUNT_BURST: '10000' }, pools: ['maintenance'] });

type Tenant = { accountId: string; token: string };
const post = (env: TestEnv, t: Tenant, body: unknown) =>
  env
    .api()
    .post('/api/v1/measurement/events')
    .set(auth(t.token))
    .send(body as object);
const event = (over: Record<string, unknown> = {}) => ({ eventId: newId('ev'), name: 'purchase', occurredAt: Date.now() - 1_000, ...over });

/** A visit through one of the account's tracked links (the way a real reader arrives), answering its gvid. */
async function clickVisit(env: TestEnv, t: Tenant, channel: string): Promise<string> {
  const url = `https://www.acme.test/${newId('p')}`;
  const codes = await trackedCodes(
    env.deps.db,
    BASE,
    {
      accountId: t.accountId,
      channel,
      sourceType: channel === 'email' ? 'send' : 'post',
      sourceId: newId('src'),
      cardId: null,
      leadId: null,
    },
    [url],
  );
  const res = await env
    .api()
    .get(`/l/${codes.get(url)}`)
    .set('User-Agent', BROWSER);
  return new URL(res.headers.location!).searchParams.get('gvid')!;
}

describe('POST /measurement/events', () => {
  it('answers each event in request order: accepted, duplicate (earlier in the call too) or invalid with a reason', async ({ env }) => {
    const t = await env.tenant();
    const b = await env.tenant();
    const foreign = await clickVisit(env, b, 'email');
    const now = Date.now();
    const a1 = event();
    const last = event({ value: 49.9, currency: 'EUR', properties: { plan: 'pro' } });
    const events = [
      a1,
      event({ eventId: a1.eventId }),
      event({ occurredAt: now - 8 * 24 * 3_600_000 }),
      event({ occurredAt: now + 10 * 60_000 }),
      event({ value: 10, currency: 'usd' }),
      event({ value: 10 }),
      event({ value: -1, currency: 'USD' }),
      event({ visitId: foreign }),
      event({ visitId: 'vis_nope' }),
      'not an event',
      { eventId: 'bad id!', name: 'x', occurredAt: now },
      event({ properties: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }),
      event({ properties: { big: 'x'.repeat(5_000) } }),
      event({ extra: 1 }),
      event({ occurredAt: 1.5 }),
      event({ name: '' }),
      last,
    ];
    const res = await post(env, t, { events });
    expect(res.status).toBe(200);
    const body = EventsResponse.parse(res.body);
    expect(body.events.map((e) => [e.outcome, e.reason])).toEqual([
      ['accepted', undefined],
      ['duplicate', undefined],
      ['invalid', 'occurredAt is more than 7 days ago'],
      ['invalid', 'occurredAt is more than 5 minutes in the future'],
      ['invalid', 'currency must be an ISO 4217 code (3 uppercase letters)'],
      ['invalid', 'currency is required when value is given'],
      ['invalid', 'value must be at least 0'],
      ['invalid', 'visitId is not a visit of this account'],
      ['invalid', 'visitId is not a visit of this account'],
      ['invalid', 'event must be an object'],
      ['invalid', 'eventId must be 1 to 128 characters of A-Za-z0-9_.:-'],
      ['invalid', 'properties must have at most 50 keys'],
      ['invalid', 'properties must be at most 4096 bytes as JSON'],
      ['invalid', 'event has unknown field extra'],
      ['invalid', 'occurredAt must be an integer (epoch milliseconds)'],
      ['invalid', 'name must not be empty'],
      ['accepted', undefined],
    ]);
    expect(body.events.map((e) => e.eventId)).toEqual(
      events.map((e) =>
        typeof e === 'string' || (e as { eventId: string }).eventId === 'bad id!' ? null : (e as { eventId: string }).eventId,
      ),
    );
    // Durable before the answer: the accepted rows are there as soon as it is.
    const stored = await rows(env, 'conversions', { account_id: t.accountId }).orderBy('event_id');
    expect(stored.map((r: { event_id: string }) => r.event_id).sort()).toEqual([a1.eventId, last.eventId].sort());
    const eur = stored.find((r: { event_id: string }) => r.event_id === last.eventId);
    expect(eur).toMatchObject({ value: '49.9000', currency: 'EUR', properties: { plan: 'pro' } });

    const again = EventsResponse.parse((await post(env, t, { events: [a1, last] })).body);
    expect(again.events.map((e) => e.outcome)).toEqual(['duplicate', 'duplicate']);
  });

  it('answers strings Postgres cannot store as invalid events, never a 500', async ({ env }) => {
    const t = await env.tenant();
    const rule = 'must not contain NUL characters or unpaired surrogates';
    const res = await post(env, t, {
      events: [
        event({ name: 'a\u0000b' }),
        event({ properties: { note: 'x\ud800' } }),
        event({ properties: { 'k\u0000': 1 } }),
        event({ properties: { nested: [{ deep: '\udc00' }] } }),
        event({ visitId: 'vis_\u0000' }),
        event({ properties: { fine: '😀', empty: null, n: [1, 2] } }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { reason?: string }) => e.reason ?? 'ok')).toEqual([
      `name ${rule}`,
      `properties ${rule}`,
      `properties ${rule}`,
      `properties ${rule}`,
      `visitId ${rule}`,
      'ok',
    ]);
  });

  it('takes 100 events and answers a re-POST of the same batch with 100 duplicates', async ({ env }) => {
    const t = await env.tenant();
    const events = Array.from({ length: 100 }, () => event({ value: 1, currency: 'USD' }));
    const first = EventsResponse.parse((await post(env, t, { events })).body);
    expect(first.events.every((e) => e.outcome === 'accepted')).toBe(true);
    const second = EventsResponse.parse((await post(env, t, { events })).body);
    expect(second.events.every((e) => e.outcome === 'duplicate')).toBe(true);
    expect(await rows(env, 'conversions', { account_id: t.accountId })).toHaveLength(100);
  });

  it('keeps the same eventId apart per account', async ({ env }) => {
    const [a, b] = [await env.tenant(), await env.tenant()];
    const e = event();
    expect((await post(env, a, { events: [e] })).body.events[0].outcome).toBe('accepted');
    expect((await post(env, b, { events: [e] })).body.events[0].outcome).toBe('accepted');
  });

  it.for([
    [{}, 'events is required'],
    [{ events: [] }, 'events must have at least 1 item'],
    [{ events: 'x' }, 'events must be an array'],
    [{ events: Array.from({ length: 101 }, () => event()) }, 'events must have at most 100 items'],
    [{ events: [event()], more: 1 }, 'body has unknown field more'],
  ])('400 for a malformed envelope %#: %s', async ([body, message], { env }) => {
    const t = await env.tenant();
    const res = await post(env, t, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: message });
    expect(await rows(env, 'conversions', { account_id: t.accountId })).toHaveLength(0);
  });

  it('400 for a body that is not JSON', async ({ env }) => {
    const t = await env.tenant();
    const res = await env.api().post('/api/v1/measurement/events').set(auth(t.token)).set('Content-Type', 'application/json').send('{nope');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/JSON/);
  });

  it('403 for a token without measurement:write', async ({ env }) => {
    const t = await env.tenant(['content:read']);
    const res = await post(env, t, { events: [event()] });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'measurement:write' });
  });
});

describe('aggregation (measurement.aggregate on the maintenance pool)', () => {
  const aggregated = (env: TestEnv, accountId: string, eventId: string) =>
    until(async () => {
      const stored = await row(env, 'conversions', { account_id: accountId, event_id: eventId });
      return stored?.aggregated_at ? stored : null;
    });

  it("attributes a conversion to its visit's channel and counts it there with its value; without a visit, direct", async ({ env }) => {
    const t = await env.tenant();
    const gvid = await clickVisit(env, t, 'email');
    const bought = event({ visitId: gvid, value: 120.5, currency: 'USD' });
    const direct = event();
    await post(env, t, { events: [bought, direct] });
    expect((await aggregated(env, t.accountId, bought.eventId)).channel).toBe('email');
    expect((await aggregated(env, t.accountId, direct.eventId)).channel).toBe('direct');
    const conversions = await rows(env, 'channel_events', { account_id: t.accountId, type: 'conversion' });
    expect(conversions).toHaveLength(1);
    expect(conversions[0]).toMatchObject({ channel: 'email', ref_id: bought.eventId, amount: 120.5 });
    expect(Number(conversions[0].at)).toBe(bought.occurredAt);
  });

  it('attributes to the channel of a reported visit (a search landing counts under seo)', async ({ env }) => {
    const t = await env.tenant();
    const visit = await env
      .api()
      .post('/api/v1/measurement/visits')
      .set(auth(t.token))
      .send({ url: 'https://www.acme.test/', referrer: 'https://www.google.com/' });
    const e = event({ visitId: visit.body.visitId });
    await post(env, t, { events: [e] });
    expect((await aggregated(env, t.accountId, e.eventId)).channel).toBe('seo');
    expect(await rows(env, 'channel_events', { account_id: t.accountId, type: 'conversion', channel: 'seo' })).toHaveLength(1);
  });

  it('never counts a conversion twice, however often it runs', async ({ env }) => {
    const t = await env.tenant();
    const gvid = await clickVisit(env, t, 'social');
    const e = event({ visitId: gvid });
    await env.deps.db('conversions').insert({
      account_id: t.accountId,
      event_id: e.eventId,
      name: 'signup',
      visit_id: gvid,
      occurred_at: e.occurredAt,
      received_at: Date.now(),
    });
    const runs = await Promise.all([aggregateOnce(env.deps.db, t.accountId), aggregateOnce(env.deps.db, t.accountId)]);
    expect(runs.sort()).toEqual([0, 1]);
    expect(await aggregateOnce(env.deps.db, t.accountId)).toBe(0);
    expect(await rows(env, 'channel_events', { account_id: t.accountId, type: 'conversion' })).toHaveLength(1);
  });

  it('picks up conversions whose job was lost through the sweep', async ({ env }) => {
    const t = await env.tenant();
    const e = event();
    // Stored a while ago with no job queued (a lost enqueue).
    await env.deps.db('conversions').insert({
      account_id: t.accountId,
      event_id: e.eventId,
      name: 'lost',
      occurred_at: e.occurredAt,
      received_at: Date.now() - 120_000,
    });
    expect(await sweepConversions(env.deps)).toBeGreaterThanOrEqual(1);
    expect((await aggregated(env, t.accountId, e.eventId)).channel).toBe('direct');
  });

  it("does not let tenant B name tenant A's visit", async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const gvid = await clickVisit(env, a, 'email');
    const res = await post(env, b, { events: [event({ visitId: gvid })] });
    expect(res.body.events[0]).toMatchObject({ outcome: 'invalid', reason: 'visitId is not a visit of this account' });
    expect(await rows(env, 'conversions', { account_id: b.accountId })).toHaveLength(0);
  });
});
