import { describe, expect } from 'vitest';
import { SeriesReply } from '../../api/dashboard/results.schemas.js';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { recordChannelEvent } from '../../src/results/channel-events.js';
import { NO_MEASUREMENT } from '../../src/results/report/results.service.js';
import { type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';
import { foldAccount } from '../helpers/rollups.js';

/**
 * GET /dashboard/api/results/series: each channel's /results figures per hour (24h) or UTC day (7d, 30d), from the
 * hourly rollups and the events not folded yet; the window checked; only the person's own account; unknown (null)
 * apart from zero.
 */

// No SMTP listener: replies come back only through an inbound URL, so without one they are unknown.
it.override('options', { env: { INBOUND_SMTP_PORT: '0', DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1' } });

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function series(ana: SignedInPerson, window?: string) {
  const res = await ana.request('get', `/dashboard/api/results/series${window ? `?window=${window}` : ''}`).expect(200);
  return SeriesReply.parse(res.body);
}

type Reply = Awaited<ReturnType<typeof series>>;
const values = (s: Reply, channel: keyof Reply['channels'], key: string) => {
  const c = s.channels[channel];
  if (!c.available) throw new Error(`${channel} not available: ${c.reason}`);
  return c.figures.find((f) => f.key === key)!.values;
};
/** The index of the bucket `at` falls in. */
const indexOf = (s: Reply, at: number) => s.buckets.findLastIndex((b) => b <= at);

describe('the scoreboard over time', () => {
  it('refuses a window it does not know, naming the field, and defaults to the last 24 hours by the hour', async ({ env }) => {
    const ana = await signedIn(env, { email: 'ana@series.example' });
    for (const bad of ['1y', '24H', '']) {
      const res = await ana.request('get', `/dashboard/api/results/series?window=${bad}`).expect(400);
      expect(res.body.error).toMatch(/window/);
    }
    const extra = await ana.request('get', '/dashboard/api/results/series?since=1').expect(400);
    expect(extra.body.error).toMatch(/since/);
    await env.api().get('/dashboard/api/results/series').expect(401);

    const s = await series(ana);
    expect(s).toMatchObject({ window: '24h', by: 'hour' });
    expect(s.buckets).toHaveLength(24);
    expect(s.buckets.at(-1)).toBe(Math.floor(Date.now() / HOUR) * HOUR);
    expect((await series(ana, '7d')).buckets).toHaveLength(7);
    const month = await series(ana, '30d');
    expect(month).toMatchObject({ by: 'day' });
    expect(month.buckets).toHaveLength(30);
    expect(month.buckets.every((b) => b % DAY === 0)).toBe(true);
    // A channel the account has not connected says why, as /results does.
    expect(month.channels.seo).toEqual({ available: false, reason: NO_MEASUREMENT });
  });

  it('counts folded and unfolded events in their buckets, for the account only, unknown apart from zero', async ({ env }) => {
    const db = env.deps.db;
    const ana = await signedIn(env, { email: 'ana@counts.example' });
    const other = (await createAccount(db, 'Other Co')).id;
    const now = Date.now();
    const threeHoursAgo = now - 3 * HOUR;
    const twentyDaysAgo = now - 20 * DAY;
    const sent = (accountId: string, at: number, refId: string) =>
      recordChannelEvent(db, accountId, { channel: 'email', type: 'sent', at, decidedBy: 'person', refId });
    await sent(ana.accountId, threeHoursAgo, 's1');
    await sent(ana.accountId, threeHoursAgo, 's2');
    await sent(ana.accountId, twentyDaysAgo, 's-old');
    await foldAccount(db, ana.accountId);
    // Written after the fold: counted from the raw tail.
    await sent(ana.accountId, now - 1000, 's3');
    await recordChannelEvent(db, ana.accountId, { channel: 'email', type: 'reply', at: now - 1000, refId: 'r1' });
    // Another account's mail, in the same hours: never in Ana's figures.
    for (const [i, at] of [threeHoursAgo, now - 1000, twentyDaysAgo].entries()) await sent(other, at, `o${i}`);

    const day = await series(ana, '24h');
    const sentByHour = values(day, 'email', 'sent');
    const expected = day.buckets.map(() => 0);
    expected[indexOf(day, threeHoursAgo)]! += 2;
    expected[indexOf(day, now - 1000)]! += 1;
    expect(sentByHour).toEqual(expected);
    // No return path: replies are unknown in every hour (null), not zero; sends are known.
    expect(values(day, 'email', 'replies')).toEqual(day.buckets.map(() => null));
    expect(values(day, 'email', 'replyRate')).toEqual(day.buckets.map(() => null));
    expect(day.channels.email.available && day.channels.email.figures.find((f) => f.key === 'replyRate')?.kind).toBe('rate');

    const month = await series(ana, '30d');
    const sentByDay = values(month, 'email', 'sent');
    expect(sentByDay.reduce((a, b) => a! + b!, 0)).toBe(4);
    expect(sentByDay[indexOf(month, twentyDaysAgo)]).toBe(1);
    expect(values(await series(ana, '7d'), 'email', 'sent').reduce((a, b) => a! + b!, 0)).toBe(3);

    // With a return path, replies are counts: zero where none came, one where the reply did.
    await db('inbound_urls').insert({ id: 'inb_series', account_id: ana.accountId, secret_hash: 'h-series', created_at: now });
    const known = await series(ana, '24h');
    const replies = values(known, 'email', 'replies');
    expect(replies[indexOf(known, now - 1000)]).toBe(1);
    expect(replies.filter((v) => v === 0)).toHaveLength(23);
    // A rate with nothing to divide by is unknown, not zero.
    expect(values(known, 'email', 'replyRate')[0]).toBeNull();
  });
});
