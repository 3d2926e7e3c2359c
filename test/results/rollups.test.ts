import { describe, expect } from 'vitest';
import { newId } from '../../src/ids.js';
import {
  CHANNEL_EVENT_TYPES,
  CHANNELS,
  connectChannel,
  recordChannelEvent,
  recordChannelEvents,
  type ChannelEvent,
} from '../../src/results/channel-events.js';
import { getResults } from '../helpers/scoreboard.js';
import { rollupFold } from '../../src/results/rollups.repository.js';
import { rollUpAll, runRollupPass } from '../../src/results/rollups.service.js';
import type { Db } from '../../src/db.js';
import { prng } from '../../src/leads/seed.js';
import { buildCard } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';

/**
 * `/results` reads whole hours from the hourly rollups, whole minutes of the partial edge hours from the minute
 * rollups (from `minutes_from` on) and partial minutes raw. Whatever the history (late events, repeated refIds,
 * several accounts, times on hour and minute boundaries, rows changed after they were folded, passes at any point,
 * counts folded before the minute grain), its answer equals the raw count of the same window (`rollups: false`).
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MINUTE = 60_000;
const NOW = 1_800_000_000_000 + 17 * HOUR + 1_234;

type Time = (rand: () => number) => number;

/** A time in the [`lo`, `hi`) (the last 15 days); one in three sits on an hour or minute boundary or a millisecond beside one. */
const timeBetween =
  (lo: number, hi: number): Time =>
  (rand) => {
    const t = hi - 1 - Math.floor(rand() * (hi - 1 - lo));
    const r = rand();
    const edge = r < 0.15 ? HOUR : r < 0.33 ? MINUTE : 0;
    const near = edge ? Math.floor(t / edge) * edge + [-1, 0, 1][Math.floor(rand() * 3)]! : t;
    return Math.min(Math.max(near, lo), hi - 1);
  };
const timeIn = timeBetween(NOW - 15 * DAY, NOW + 1);

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

function randomEvent(rand: () => number, refs: string[], time = timeIn): ChannelEvent {
  const channel = pick(rand, CHANNELS);
  const type = pick(rand, CHANNEL_EVENT_TYPES[channel].types as readonly string[]);
  const roll = rand();
  // A repeat of an earlier refId (a retried job), none, or a new one.
  const refId = roll < 0.25 && refs.length ? pick(rand, refs) : roll < 0.5 ? null : newId('ref');
  if (refId) refs.push(refId);
  return {
    channel,
    type,
    at: time(rand),
    decidedBy: pick(rand, [null, 'person', 'trust_ladder', 'setting'] as const),
    amount: rand() < 0.7 ? Math.floor(rand() * 5_000) : null,
    refId,
  };
}

/** Conversions reported, aggregated later (some after a pass), a few removed. */
async function conversions(env: TestEnv, rand: () => number, accountId: string, n: number, time = timeIn) {
  const db = env.deps.db;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newId('evt');
    ids.push(id);
    await db('conversions').insert({
      account_id: accountId,
      event_id: id,
      name: 'purchase',
      value: rand() < 0.8 ? (Math.floor(rand() * 10_000_000) / 10_000).toFixed(4) : null,
      currency: pick(rand, ['USD', 'EUR', null]),
      occurred_at: time(rand),
      received_at: NOW,
      ...(rand() < 0.5 ? { channel: pick(rand, ['email', 'seo', 'direct']), aggregated_at: NOW } : {}),
    });
  }
  return {
    aggregateRest: () =>
      db('conversions').where({ account_id: accountId }).whereNull('aggregated_at').update({ channel: 'social', aggregated_at: NOW }),
    removeSome: () => db('conversions').where({ account_id: accountId }).whereIn('event_id', ids.slice(0, 3)).del(),
  };
}

/** Turns and cards: created, then finished or resolved (sometimes after a pass), a few merged or dismissed. */
async function agentWork(env: TestEnv, rand: () => number, accountId: string, n: number, time = timeIn) {
  const db = env.deps.db;
  const turns: string[] = [];
  const cards: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = time(rand);
    const id = newId('turn');
    turns.push(id);
    const started = rand() < 0.8 ? at - 1_000 : null;
    await db('agent_turns').insert({
      id,
      account_id: accountId,
      kind: 'message',
      origin: 'api',
      text: 'work',
      status: pick(rand, ['replied', 'failed', 'running', 'expired']),
      created_at: at - 2_000,
      not_before: at - 2_000,
      started_at: started,
      finished_at: started === null && rand() < 0.5 ? null : at,
    });
    const card = await buildCard(db, accountId, 'plain');
    cards.push(card.id);
    await db('review_cards')
      .where({ id: card.id })
      .update({ created_at: time(rand) });
  }
  return async () => {
    for (const id of turns.filter(() => rand() < 0.3)) {
      await db('agent_turns')
        .where({ id })
        .update({ status: pick(rand, ['replied', 'failed', 'running']), finished_at: timeIn(rand) });
    }
    for (const id of cards.filter(() => rand() < 0.6)) {
      const by = pick(rand, ['person', 'trust_ladder', 'setting']);
      const action = pick(rand, ['approve', 'send', 'answer', 'choose', 'merged', 'edit']);
      const status = pick(rand, ['resolved', 'sent', 'dismissed']);
      await db('review_cards')
        .where({ id })
        .update({ status, resolution: JSON.stringify({ by, action }), resolved_at: timeIn(rand) });
    }
  };
}

/**
 * The rollup answer and the raw answer, for the default window, both edges of the clamp, hour and minute edges and
 * random ones (`more` besides), ending at NOW (just past an hour) and at a time mid-hour and mid-minute.
 */
async function expectSameAsRaw(env: TestEnv, rand: () => number, accountIds: string[], more: number[] = []) {
  for (const now of [NOW, NOW - 5 * HOUR - 22 * MINUTE - 7_777]) {
    const sinces = [undefined, now - 7 * DAY, now - HOUR, Math.floor((now - 3 * DAY) / HOUR) * HOUR, now - 3 * DAY - 1, ...more];
    sinces.push(Math.floor((now - 2 * DAY) / MINUTE) * MINUTE, Math.floor((now - 2 * DAY) / MINUTE) * MINUTE + 1);
    for (let i = 0; i < 4; i++) sinces.push(now - HOUR - Math.floor(rand() * 6 * DAY));
    for (const accountId of accountIds) {
      for (const since of sinces) {
        const rolled = await getResults(env.deps.db, accountId, since, now);
        const raw = await getResults(env.deps.db, accountId, since, now, true, { rollups: false });
        expect(rolled, `account ${accountId} since ${since} now ${now}`).toEqual(raw);
      }
    }
  }
}

/**
 * Rollup passes until the watermark is past every transaction that committed before the call (tests: another
 * database's transactions on the same cluster hold the watermark back for a moment), or `deadlineMs` passed.
 * Answers whether it got there.
 */
async function rollUpPastNow(db: Db, deadlineMs = 30_000): Promise<boolean> {
  const { rows } = (await db.raw('SELECT pg_current_xact_id()::text AS xid')) as { rows: { xid: string }[] };
  const target = BigInt(rows[0]!.xid);
  const end = Date.now() + deadlineMs;
  for (;;) {
    await rollUpAll(db);
    const { watermark } = await runRollupPass(db);
    if (watermark !== null && BigInt(watermark) > target) return true;
    if (Date.now() > end) return false;
    // A bounded poll that runs a pass each round (its deadline above), not a fixed wait.
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Counts per account and metric (or channel and type) of one rollup table, for comparing the two grains. */
async function grainTotals(env: TestEnv, accountIds: string[], table: string) {
  const key = table.startsWith('channel') ? "channel || '.' || type" : "metric || '.' || key1 || '.' || key2";
  const { rows } = (await env.deps.db.raw(
    `SELECT account_id, ${key} AS k, sum(n)::int AS n FROM ${table} WHERE account_id = ANY (?) GROUP BY 1, 2 HAVING sum(n) <> 0`,
    [accountIds],
  )) as { rows: { account_id: string; k: string; n: number }[] };
  return rows.map((r) => `${r.account_id} ${r.k} ${r.n}`).sort();
}

// Each comparison is dozens of /results reads; the watermark may wait on other files' transactions (rollUpPastNow).
describe('/results rollups', { timeout: 120_000 }, () => {
  it('answer what the raw rows answer, on random histories with passes at random points', async ({ env }) => {
    for (const seed of [1, 2, 3]) {
      const rand = prng(seed);
      const accountIds = [(await env.tenant()).accountId, (await env.tenant()).accountId, (await env.tenant()).accountId];
      const refs: string[] = [];
      const later: Array<() => Promise<unknown>> = [];
      for (const accountId of accountIds) {
        const c = await conversions(env, rand, accountId, 12);
        later.push(c.aggregateRest, c.removeSome, await agentWork(env, rand, accountId, 8));
      }
      for (let batch = 0; batch < 8; batch++) {
        const items = Array.from({ length: 40 }, () => ({ accountId: pick(rand, accountIds), event: randomEvent(rand, refs) }));
        await recordChannelEvents(env.deps.db, items);
        // Small passes: a pass folds a bounded number of rows, the rest waits for the next one.
        if (rand() < 0.6) await runRollupPass(env.deps.db, undefined, 25);
        if (batch === 4) for (const change of later) await change();
      }
      await expectSameAsRaw(env, rand, accountIds);
      expect(await rollUpPastNow(env.deps.db)).toBe(true);
      await expectSameAsRaw(env, rand, accountIds);
      const pending = await rows(env, 'channel_events')
        .whereIn('account_id', accountIds)
        .whereRaw(`xid >= (SELECT xid FROM results_rollup_watermark)`);
      expect(pending).toHaveLength(0);
      // Both grains hold every folded event and delta.
      expect(await grainTotals(env, accountIds, 'channel_event_rollups')).toEqual(
        await grainTotals(env, accountIds, 'channel_event_rollups_minute'),
      );
      expect(await grainTotals(env, accountIds, 'results_rollups')).toEqual(await grainTotals(env, accountIds, 'results_rollups_minute'));
    }
  });

  it('answer what the raw rows answer on both sides of minutes_from, before which counts are in the hourly rollups only', async ({
    env,
  }) => {
    const db = env.deps.db;
    // Mid-hour, three days back: the window's edges fall before it, after it and in its hour.
    const minutesFrom = Math.floor((NOW - 3 * DAY - 17 * MINUTE) / MINUTE) * MINUTE;
    const rand = prng(11);
    const accountIds = [(await env.tenant()).accountId, (await env.tenant()).accountId];
    const refs: string[] = [];
    const later: Array<() => Promise<unknown>> = [];
    // Before the minute grain: history up to minutes_from, folded, then its minute rows gone (an older release kept none).
    const before = timeBetween(NOW - 15 * DAY, minutesFrom);
    for (const accountId of accountIds) {
      const c = await conversions(env, rand, accountId, 12, before);
      later.push(c.aggregateRest, c.removeSome, await agentWork(env, rand, accountId, 8, before));
    }
    for (let batch = 0; batch < 4; batch++) {
      const items = Array.from({ length: 40 }, () => ({ accountId: pick(rand, accountIds), event: randomEvent(rand, refs, before) }));
      await recordChannelEvents(db, items);
    }
    expect(await rollUpPastNow(db)).toBe(true);
    for (const table of ['channel_event_rollups_minute', 'results_rollups_minute']) await db(table).whereIn('account_id', accountIds).del();
    const sinces = [minutesFrom - 1, minutesFrom, minutesFrom + 1, minutesFrom + 30 * MINUTE + 7, minutesFrom + DAY + 5];
    try {
      // Read as if the minute rollups were complete, the answer would miss those counts.
      const differs = await Promise.all(
        sinces.map(async (since) => {
          const rolled = await getResults(db, accountIds[0]!, since, NOW);
          return JSON.stringify(rolled) !== JSON.stringify(await getResults(db, accountIds[0]!, since, NOW, true, { rollups: false }));
        }),
      );
      expect(differs).toContain(true);
      await db('results_rollup_watermark').update({ minutes_from: minutesFrom });
      await expectSameAsRaw(env, rand, accountIds, sinces);
      // Then history on both sides, rows changed after they were folded, and small passes at random points.
      for (let batch = 0; batch < 6; batch++) {
        const items = Array.from({ length: 40 }, () => ({ accountId: pick(rand, accountIds), event: randomEvent(rand, refs) }));
        await recordChannelEvents(db, items);
        if (rand() < 0.6) await runRollupPass(db, undefined, 25);
        if (batch === 2) for (const change of later) await change();
      }
      await expectSameAsRaw(env, rand, accountIds, sinces);
      expect(await rollUpPastNow(db)).toBe(true);
      await expectSameAsRaw(env, rand, accountIds, sinces);
    } finally {
      await db('results_rollup_watermark').update({ minutes_from: 0 });
    }
  });

  it('never folds past a transaction still open, so its events count once when it commits late', async ({ env }) => {
    const { accountId } = await env.tenant();
    const at = NOW - 2 * DAY;
    // Connected first: the two writers below would otherwise wait on each other's connection row.
    await connectChannel(env.deps.db, accountId, 'email', at);
    const slow = await env.deps.db.transaction();
    await recordChannelEvent(slow, accountId, { channel: 'email', type: 'sent', at, refId: 'slow' });
    // A later transaction commits first: its xid is above the open one's.
    await recordChannelEvent(env.deps.db, accountId, { channel: 'email', type: 'sent', at, refId: 'fast' });
    await rollUpAll(env.deps.db);
    await slow.commit();
    expect(await rollUpPastNow(env.deps.db)).toBe(true);
    const rollup = await rows(env, 'channel_event_rollups', { account_id: accountId, type: 'sent' }).sum({ n: 'n' });
    expect(Number(rollup[0]!.n)).toBe(2);
    const window = await getResults(env.deps.db, accountId, NOW - 3 * DAY, NOW);
    expect(window.email).toMatchObject({ available: true, data: { window: { sent: 2 } } });
  });

  it('counts nothing from a pass that dies before it commits', async ({ env }) => {
    const { accountId } = await env.tenant();
    await recordChannelEvent(env.deps.db, accountId, { channel: 'network', type: 'message_sent', at: NOW - DAY, refId: 'm1' });
    const died = env.deps.db.transaction(async (trx) => {
      const fold = rollupFold(trx);
      const lo = (await fold.lockWatermark())!;
      await fold.foldEvents(lo, await fold.settled());
      throw new Error('the pass died');
    });
    await expect(died).rejects.toThrow('the pass died');
    expect(await rows(env, 'channel_event_rollups', { account_id: accountId })).toHaveLength(0);
    await rollUpAll(env.deps.db);
    const rolled = await getResults(env.deps.db, accountId, NOW - 2 * DAY, NOW);
    expect(rolled.network).toMatchObject({ data: { window: { messagesSent: 1 } } });
    expect(rolled).toEqual(await getResults(env.deps.db, accountId, NOW - 2 * DAY, NOW, true, { rollups: false }));
  });
});
