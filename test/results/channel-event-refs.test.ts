import { describe, expect } from 'vitest';
import { countedRefs, recordChannelEvent, recordChannelEvents } from '../../src/results/channel-events.js';
import { type EventRow, resultsRepository } from '../../src/results/results.repository.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { rows } from '../helpers/rows.js';

/**
 * `channel_events` is partitioned by month on `at`, so the dedupe of a refId lives in `channel_event_refs`
 * (docs/decisions/retention.md, "Partitioning by time"): the same (account, channel, type, refId) counts once,
 * whatever time each record carries and whichever connection records it.
 */
const DAY = 86_400_000;

const eventsOf = async (env: TestEnv, accountId: string) =>
  (await rows(env, 'channel_events', { account_id: accountId }).select('ref_id', 'at', 'amount')) as {
    ref_id: string | null;
    at: string;
    amount: number | null;
  }[];
const refsOf = async (env: TestEnv, accountId: string) =>
  ((await rows(env, 'channel_event_refs', { account_id: accountId }).pluck('ref_id')) as string[]).sort();

const row = (accountId: string, over: Partial<EventRow>): EventRow => ({
  account_id: accountId,
  channel: 'ads',
  type: 'spend',
  at: Date.now(),
  decided_by: 'person',
  amount: 100,
  ref_id: null,
  recorded_at: Date.now(),
  ...over,
});

describe('a channel event with a refId', () => {
  it('counts once when recorded twice, even with another time in another month', async ({ env }) => {
    const { accountId } = await env.tenant();
    const now = Date.now();
    const e = { channel: 'email' as const, type: 'sent', refId: 'send-1' };
    expect(await recordChannelEvent(env.deps.db, accountId, { ...e, at: now })).toBe(true);
    expect(await recordChannelEvent(env.deps.db, accountId, { ...e, at: now })).toBe(false);
    // A retried job whose event carries another time, months away: still the same event.
    expect(await recordChannelEvent(env.deps.db, accountId, { ...e, at: now - 70 * DAY })).toBe(false);
    expect(await recordChannelEvent(env.deps.db, accountId, { ...e, at: now + 40 * DAY })).toBe(false);
    expect((await eventsOf(env, accountId)).map((r) => Number(r.at))).toEqual([now]);
    expect(await refsOf(env, accountId)).toEqual(['send-1']);

    // Another type, channel or account with the same refId is another event; one without a refId always counts.
    expect(await recordChannelEvent(env.deps.db, accountId, { channel: 'email', type: 'reply', at: now, refId: 'send-1' })).toBe(true);
    expect(await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: now, refId: 'send-1' })).toBe(true);
    const other = await env.tenant();
    expect(await recordChannelEvent(env.deps.db, other.accountId, { ...e, at: now })).toBe(true);
    expect(await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: now })).toBe(true);
    expect(await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: now })).toBe(true);
    expect(await eventsOf(env, accountId)).toHaveLength(5);
  });

  it('counts a refId repeated within one batch once: the first of them, with the rest of the batch', async ({ env }) => {
    const { accountId } = await env.tenant();
    const now = Date.now();
    const n = await resultsRepository(env.deps.db).insertEvents([
      row(accountId, { ref_id: 'spend-1', amount: 1, at: now - 40 * DAY }),
      row(accountId, { ref_id: null, amount: 2 }),
      row(accountId, { ref_id: 'spend-1', amount: 3, at: now }),
      row(accountId, { ref_id: 'spend-2', amount: 4 }),
      row(accountId, { ref_id: null, amount: 5 }),
      row(accountId, { ref_id: 'spend-2', amount: 6 }),
    ]);
    expect(n).toBe(4);
    const rows = await eventsOf(env, accountId);
    expect(rows.map((r) => r.amount).sort()).toEqual([1, 2, 4, 5]);
    expect(Number(rows.find((r) => r.ref_id === 'spend-1')!.at)).toBe(now - 40 * DAY);
    // A batch of repeats only, and a batch mixing a repeat with a new one.
    expect(await resultsRepository(env.deps.db).insertEvents([row(accountId, { ref_id: 'spend-1' })])).toBe(0);
    expect(
      await recordChannelEvents(env.deps.db, [
        { accountId, event: { channel: 'ads', type: 'spend', at: now, amount: 7, refId: 'spend-2' } },
        { accountId, event: { channel: 'ads', type: 'spend', at: now, amount: 8, refId: 'spend-3' } },
      ]),
    ).toBe(1);
    expect(await refsOf(env, accountId)).toEqual(['spend-1', 'spend-2', 'spend-3']);
    expect(await countedRefs(env.deps.db, accountId, 'ads', 'spend', ['spend-3', 'spend-4'])).toEqual(new Set(['spend-3']));
  });

  it('files each event in the month partition of its time', async ({ env }) => {
    const { accountId } = await env.tenant();
    const now = Date.now();
    await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: now, refId: 'v-now' });
    await recordChannelEvent(env.deps.db, accountId, { channel: 'seo', type: 'visit', at: 1, refId: 'v-1970' });
    const { rows } = (await env.deps.db.raw('SELECT ref_id, tableoid::regclass::text AS part FROM channel_events WHERE account_id = ?', [
      accountId,
    ])) as { rows: { ref_id: string; part: string }[] };
    const d = new Date(now);
    const month = `channel_events_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
    expect(Object.fromEntries(rows.map((r) => [r.ref_id, r.part]))).toEqual({ 'v-now': month, 'v-1970': 'channel_events_pdefault' });
  });

  it('counts once when two connections record it at the same moment: the second waits for the first and learns it lost', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    const e = { channel: 'network' as const, type: 'reply', at: Date.now(), refId: 'reply-1' };
    for (const ending of ['commit', 'rollback'] as const) {
      const ref = `${e.refId}-${ending}`;
      const first = await env.deps.db.transaction();
      const second = await env.deps.db.transaction();
      try {
        const pid = ((await second.raw('SELECT pg_backend_pid() AS pid')) as { rows: { pid: number }[] }).rows[0]!.pid;
        expect(await recordChannelEvent(first, accountId, { ...e, refId: ref })).toBe(true);
        const racing = recordChannelEvent(second, accountId, { ...e, refId: ref, at: e.at + DAY });
        await waitFor(async () => {
          const { rows } = (await env.deps.db.raw('SELECT wait_event_type FROM pg_stat_activity WHERE pid = ?', [pid])) as {
            rows: { wait_event_type: string | null }[];
          };
          return rows[0]?.wait_event_type === 'Lock';
        }, 'the second insert waiting on the first');
        await first[ending]();
        // The first committed: the second counted nothing. It rolled back: the second is the one that counts.
        expect(await racing).toBe(ending === 'rollback');
        await second.commit();
      } finally {
        if (!first.isCompleted()) await first.rollback();
        if (!second.isCompleted()) await second.rollback();
      }
      const rows = (await eventsOf(env, accountId)).filter((r) => r.ref_id === ref);
      expect(rows.map((r) => Number(r.at))).toEqual([ending === 'commit' ? e.at : e.at + DAY]);
    }
    expect(await refsOf(env, accountId)).toEqual(['reply-1-commit', 'reply-1-rollback']);
  });
});
