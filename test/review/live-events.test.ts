import { describe, expect } from 'vitest';
import type { LiveEntry } from '../../src/queue-version/live-events.js';
import { createLiveHub, type LiveHub, type LiveSink } from '../../src/review/live-stream.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { dismissCard } from '../../src/review/review.service.js';
import { wakeCard } from '../../src/review/timers.service.js';
import { buildCard } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until as pollTruthy } from '../helpers/processes.js';

it.override('options', { env: { LIVE_STREAMS_PER_SESSION: '2', LIVE_STREAMS_PER_ACCOUNT: '3', LIVE_HEARTBEAT_MS: '200' } });

/** A sink that keeps what the hub tells it. */
function collector() {
  const seen = {
    events: [] as LiveEntry[],
    ready: [] as (string | null)[],
    resync: [] as (string | null)[],
    ended: [] as string[],
    beats: 0,
  };
  const sink: LiveSink = {
    event: (e) => seen.events.push(e),
    ready: (id) => seen.ready.push(id),
    resync: (id) => seen.resync.push(id),
    heartbeat: () => seen.beats++,
    end: (why) => seen.ended.push(why),
  };
  return { seen, sink };
}

/** Waits, bounded, until `what` holds of what the stream has shown so far. */
const until = <T>(what: () => T | undefined | false, ms = 10_000): Promise<T> => pollTruthy(async () => what(), ms, 20);

const withHub = async (env: TestEnv, fn: (hub: LiveHub) => Promise<void>) => {
  const hub = createLiveHub(env.deps);
  try {
    await fn(hub);
  } finally {
    await hub.close();
  }
};

describe('the review queue live events', () => {
  it('announces a filed card and a person’s decision with who acted, and a reconnect catches up from its last id', async ({ env }) => {
    const { accountId } = await env.tenant();
    await withHub(env, async (hub) => {
      const first = collector();
      const opened = await hub.open({ accountId, sessionId: 'ses1', lastEventId: null, sink: first.sink, sessionLive: async () => true });
      expect(opened.ok).toBe(true);
      const card = await buildCard(env.deps.db, accountId, 'plain');
      const filed = await until(() => first.seen.events.find((e) => e.event.cardId === card.id));
      expect(filed.event).toMatchObject({ type: 'card.filed', cardId: card.id, status: 'pending', decided: false, by: 'the service' });
      if (opened.ok) await opened.close();

      // While no stream is open: a person (through a token labelled ops-laptop) dismisses it, and another card is filed.
      await dismissCard(
        env.deps,
        { accountId, actor: 'api', tokenId: 'tok', tokenLabel: 'ops-laptop', method: 'POST', route: 'test' },
        accountId,
        card.id,
        'no',
      );
      const second = await buildCard(env.deps.db, accountId, 'plain');

      const again = collector();
      const reopened = await hub.open({
        accountId,
        sessionId: 'ses1',
        lastEventId: filed.id,
        sink: again.sink,
        sessionLive: async () => true,
      });
      await until(() => again.seen.events.length >= 2);
      expect(again.seen.events.map((e) => [e.event.type, e.event.cardId, e.event.status, e.event.by, e.event.decided])).toEqual([
        ['card.updated', card.id, 'dismissed', 'ops-laptop', true],
        ['card.filed', second.id, 'pending', 'the service', false],
      ]);
      expect(again.seen.resync).toEqual([]);
      if (reopened.ok) await reopened.close();
    });
  });

  it('names the trust ladder, an approval setting and the timer as who acted', async ({ env }) => {
    const { accountId } = await env.tenant();
    await withHub(env, async (hub) => {
      const { seen, sink } = collector();
      await hub.open({ accountId, sessionId: 's', lastEventId: null, sink, sessionLive: async () => true });
      const repo = cardsRepository(env.deps.db);
      const byLadder = await buildCard(env.deps.db, accountId, 'plain');
      const bySetting = await buildCard(env.deps.db, accountId, 'plain');
      const snoozed = await buildCard(env.deps.db, accountId, 'plain', { status: 'snoozed', snoozedUntil: 1_000 });
      const at = Date.now();
      for (const [card, by] of [
        [byLadder, 'trust_ladder'],
        [bySetting, 'setting'],
      ] as const)
        await repo.transition(
          accountId,
          card.id,
          { statuses: ['pending'] },
          { status: 'resolved', resolvedAt: at, resolution: { action: 'approve', by, at } },
        );
      expect(await wakeCard(env.deps, accountId, snoozed.id, 1_000)).toBe(true);
      await until(() => seen.events.filter((e) => e.event.type === 'card.updated').length >= 3);
      expect(
        seen.events
          .filter((e) => e.event.type === 'card.updated')
          .map((e) => [e.event.cardId, e.event.by, e.event.decided, e.event.status]),
      ).toEqual([
        [byLadder.id, 'the trust ladder', true, 'resolved'],
        [bySetting.id, 'an approval setting', true, 'resolved'],
        [snoozed.id, 'timer', false, 'pending'],
      ]);
    });
  });

  it('tells a reader whose last id the backlog no longer holds to reload', async ({ env }) => {
    const { accountId } = await env.tenant();
    await withHub(env, async (hub) => {
      await buildCard(env.deps.db, accountId, 'plain');
      const { seen, sink } = collector();
      const opened = await hub.open({ accountId, sessionId: 's', lastEventId: '1-0', sink, sessionLive: async () => true });
      expect(seen.resync).toHaveLength(1);
      expect(seen.resync[0]).toMatch(/^\d+-\d+$/);
      if (opened.ok) await opened.close();
    });
  });

  it('caps open streams per session and per account, and ends a stream when its session ends', async ({ env }) => {
    const { accountId } = await env.tenant();
    await withHub(env, async (hub) => {
      const open = (sessionId: string, live = async () => true) =>
        hub.open({ accountId, sessionId, lastEventId: null, sink: collector().sink, sessionLive: live });
      const a1 = await open('a');
      const a2 = await open('a');
      expect([a1.ok, a2.ok]).toEqual([true, true]);
      expect(await open('a')).toEqual({ ok: false, retryAfterSeconds: 1, limit: 'session' });
      const b1 = await open('b');
      expect(b1.ok).toBe(true);
      expect(await open('c')).toEqual({ ok: false, retryAfterSeconds: 1, limit: 'account' });
      if (a1.ok) await a1.close();
      const c1 = await open('c');
      expect(c1.ok).toBe(true);
      for (const s of [a2, b1, c1]) if (s.ok) await s.close();

      let live = true;
      const { seen, sink } = collector();
      await hub.open({ accountId, sessionId: 'd', lastEventId: null, sink, sessionLive: async () => live });
      await until(() => seen.beats >= 1);
      live = false;
      await until(() => seen.ended.length > 0);
      expect(seen.ended).toEqual(['session']);
      expect(hub.size()).toBe(0);
    });
  });

  it('publishes nothing for a card write whose transaction rolls back', async ({ env }) => {
    const { accountId } = await env.tenant();
    await withHub(env, async (hub) => {
      const { seen, sink } = collector();
      await hub.open({ accountId, sessionId: 's', lastEventId: null, sink, sessionLive: async () => true });
      await expect(
        env.deps.db.transaction(async (trx) => {
          await buildCard(trx, accountId, 'plain');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      const kept = await buildCard(env.deps.db, accountId, 'plain');
      await until(() => seen.events.length > 0);
      expect(seen.events.map((e) => e.event.cardId)).toEqual([kept.id]);
    });
  });
});
