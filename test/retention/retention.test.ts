import { describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { getResults } from '../helpers/scoreboard.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { foldAccount } from '../helpers/rollups.js';
import { countRows, leadRow, row, rows } from '../helpers/rows.js';
import { type AgedHistory, agedAudit, agedHistory, agedLeadWithOptOut, agedVisits } from '../helpers/aged-rows.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const log = createLogger('silent');
/** Every event of the account in the rollups (test/helpers/rollups.ts). */
const foldAll = (env: TestEnv, accountId: string) => foldAccount(env.deps.db, accountId);

/** One row of every kind with a retention, `age` ms old, for the account (test/helpers/aged-rows.ts). */
const history = (env: TestEnv, accountId: string, age: number, now: number) => agedHistory(env, accountId, now - age);

async function present(env: TestEnv, accountId: string, h: AgedHistory) {
  const has = async (table: string, where: Record<string, unknown>) => (await row(env, table, where)) !== undefined;
  return {
    channelEvents: await has('channel_events', { account_id: accountId, ref_id: `ref_${h.tag}` }),
    visits: await has('visits', { id: `vis_${h.tag}` }),
    conversions: await has('conversions', { account_id: accountId, event_id: `ev_${h.tag}` }),
    audit: await has('audit_log', { target_id: h.tag }),
    agentSteps: await has('agent_turn_steps', { turn_id: h.turn }),
    agentThread: await has('agent_replies', { turn_id: h.turn }),
    finishedCards: await has('review_cards', { id: h.card }),
  };
}

const ALL = { channelEvents: true, visits: true, conversions: true, audit: true, agentSteps: true, agentThread: true, finishedCards: true };
const NONE = Object.fromEntries(Object.keys(ALL).map((k) => [k, false]));

describe('a retention pass', () => {
  it('removes what is past each kind’s retention, keeps what is not, and never touches leads, contacts or the block list', async ({
    env,
  }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const ancient = await history(env, accountId, 400 * DAY, now);
    const middling = await history(env, accountId, 60 * DAY, now);
    const fresh = await history(env, accountId, DAY, now);
    const lead = await agedLeadWithOptOut(env, accountId, 'kept.example.com');
    await foldAll(env, accountId);

    const pass = await runRetentionPass(env.deps, log, { now });
    expect(pass.skipped).toEqual([]);
    expect(pass.removed.modelCalls).toBeGreaterThanOrEqual(1);

    expect(await present(env, accountId, ancient)).toEqual(NONE);
    // 60 days: only the steps of a finished turn (30 days) have gone.
    expect(await present(env, accountId, middling)).toEqual({ ...ALL, agentSteps: false });
    expect(await present(env, accountId, fresh)).toEqual(ALL);
    expect(await leadRow(env, lead.leadId)).toBeDefined();
    expect(await rows(env, 'lead_contacts', { lead_id: lead.leadId })).toHaveLength(1);
    expect(await rows(env, 'blocklist_entries', { account_id: accountId })).toHaveLength(1);
    expect(await rows(env, 'agent_model_calls', { account_id: accountId }).pluck('day')).toHaveLength(2);
  });

  it('leaves a channel event the rollups have not counted yet, however old its time', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const late = await history(env, accountId, 200 * DAY, now);
    expect((await runRetentionPass(env.deps, log, { now, only: ['channelEvents'] })).removed).toEqual({ channelEvents: 0 });
    expect((await present(env, accountId, late)).channelEvents).toBe(true);
    await foldAll(env, accountId);
    expect((await runRetentionPass(env.deps, log, { now, only: ['channelEvents'] })).removed.channelEvents).toBeGreaterThanOrEqual(1);
    expect((await present(env, accountId, late)).channelEvents).toBe(false);
  });

  it('keeps /results of a window older than the raw retention: its counts live in the rollups', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const until = Math.floor((now - 400 * DAY) / HOUR) * HOUR;
    const seeded = [];
    for (let i = 1; i <= 5; i++) seeded.push(await history(env, accountId, now - until + i * HOUR, now));
    await foldAll(env, accountId);
    const before = await getResults(env.deps.db, accountId, until - 2 * DAY, until);
    expect(JSON.stringify(before)).toContain('visit');

    await runRetentionPass(env.deps, log, { now });
    for (const h of seeded) expect(await present(env, accountId, h)).toEqual(NONE);
    await foldAll(env, accountId);
    expect(await getResults(env.deps.db, accountId, until - 2 * DAY, until)).toEqual(before);
    // The deletes wrote no -1 deltas for the rollups to fold.
    expect(await rows(env, 'results_rollup_deltas', { account_id: accountId }).andWhere('n', '<', 0)).toEqual([]);
  });

  it('removes minute rollups after MINUTE_ROLLUP_RETENTION_DAYS (15) and keeps the hourly ones', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const old = await history(env, accountId, 16 * DAY, now);
    const recent = await history(env, accountId, 14 * DAY, now);
    await foldAll(env, accountId);
    const minute = async (table: string, age: number) =>
      rows(env, table, { account_id: accountId, bucket: Math.floor((now - age) / 60_000) * 60_000 });
    for (const table of ['channel_event_rollups_minute', 'results_rollups_minute']) {
      expect(await minute(table, 16 * DAY)).not.toEqual([]);
    }
    const pass = await runRetentionPass(env.deps, log, { now, only: ['minuteEventRollups', 'minuteResultRollups'] });
    expect(pass.removed.minuteEventRollups).toBeGreaterThanOrEqual(1);
    expect(pass.removed.minuteResultRollups).toBeGreaterThanOrEqual(1);
    for (const table of ['channel_event_rollups_minute', 'results_rollups_minute']) {
      expect(await minute(table, 16 * DAY)).toEqual([]);
      expect(await minute(table, 14 * DAY)).not.toEqual([]);
    }
    // The raw rows and the hourly rollups stay: a whole-hour window that old reads as before.
    expect(await present(env, accountId, old)).toEqual(ALL);
    expect(await present(env, accountId, recent)).toEqual(ALL);
    const hour = Math.floor((now - 16 * DAY) / HOUR) * HOUR;
    expect(await rows(env, 'channel_event_rollups', { account_id: accountId, bucket: hour })).not.toEqual([]);
  });

  it('is bounded: at most RETENTION_BATCH_ROWS a statement and RETENTION_PASS_BATCHES statements a kind, the rest next pass', async ({
    env,
  }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    await agedAudit(
      env,
      accountId,
      Array.from({ length: 7 }, (_, i) => ({ route: '/b', at: i })),
    );
    const auditLeft = () => countRows(env, 'audit_log', { account_id: accountId, route: '/b' });
    const counts: number[] = [];
    for (let i = 0; i < 5 && (await auditLeft()) > 0; i++) {
      counts.push((await runRetentionPass(env.deps, log, { now, only: ['audit'], batchRows: 2, passBatches: 2 })).removed.audit!);
    }
    // 7 rows, at most 2 statements of 2 rows a pass: two passes at least, none removing more than 4 (of any account).
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...counts)).toBe(4);
    expect(await auditLeft()).toBe(0);
  });

  it('gives up a kind rather than wait behind a writer’s lock, and a writer does not wait behind it', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    await agedAudit(env, accountId, [{ route: '/held', at: 1 }]);
    const holder = await env.deps.db.transaction();
    try {
      // A table lock takes no transaction id, so it never holds back the rollups' watermark (other files' tests).
      await holder.raw('LOCK TABLE audit_log IN SHARE MODE');
      // The pass comes back while the lock is still held (a pass that waited for it would never return before the
      // rollback below), having skipped the kind it could not lock.
      const pass = await runRetentionPass(env.deps, log, { now, only: ['audit'] });
      expect(pass).toMatchObject({ removed: { audit: 0 }, skipped: ['audit'] });
    } finally {
      await holder.rollback();
    }

    // Writers go on while a pass deletes a large backlog: no insert waits long on it.
    await agedAudit(
      env,
      accountId,
      Array.from({ length: 20_000 }, (_, i) => ({ actor: 't', route: '/o', at: i })),
    );
    let writing = true;
    /** Inserts committed while the pass still ran: a pass holding the table for its whole length would let one through at most. */
    let duringPass = 0;
    let inserts = 0;
    const writer = (async () => {
      while (writing) {
        await agedAudit(env, accountId, [{ actor: 't', method: 'POST', route: '/new', at: now }]);
        inserts++;
        if (writing) duringPass++;
      }
    })();
    const pass = await runRetentionPass(env.deps, log, { now, only: ['audit'], batchRows: 1_000 });
    writing = false;
    await writer;
    expect(pass.removed.audit).toBeGreaterThanOrEqual(20_000);
    expect(duringPass).toBeGreaterThan(1);
    expect(await rows(env, 'audit_log', { account_id: accountId, route: '/new' })).toHaveLength(inserts);
  });
});

describe('visits partitioned by month', () => {
  const monthOf = (t: number) => {
    const d = new Date(t);
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const name = `visits_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
    return { name, start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
  };
  const partitions = async (env: TestEnv) =>
    (
      await env.deps.db.raw(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                             WHERE i.inhparent = 'visits'::regclass`)
    ).rows.map((r: { name: string }) => r.name) as string[];

  it('drops a month whole once all of it is past VISIT_RETENTION_DAYS and makes the months ahead', async ({ env }) => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const old = monthOf(now - 300 * DAY);
    await env.deps.db.raw(`CREATE TABLE ${old.name} PARTITION OF visits FOR VALUES FROM (${old.start}) TO (${old.end})`);
    const ahead = monthOf(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() + 2, 1));
    await env.deps.db.raw(`DROP TABLE ${ahead.name}`);
    await agedVisits(
      env,
      [old.start, old.start + DAY, now - DAY].map((at, i) => ({ id: `vis_part${i}`, accountId, at })),
    );

    const pass = await runRetentionPass(env.deps, log, { now });
    expect(pass.partitions.dropped).toContain(old.name);
    expect(pass.partitions.made).toEqual([ahead.name]);
    const names = await partitions(env);
    expect(names).not.toContain(old.name);
    expect(names).toEqual(expect.arrayContaining([monthOf(now).name, ahead.name, 'visits_pdefault']));
    expect(await rows(env, 'visits', { account_id: accountId }).pluck('id')).toEqual(['vis_part2']);
    // A second pass has nothing to make or drop.
    expect((await runRetentionPass(env.deps, log, { now })).partitions).toEqual({ made: [], dropped: [] });
  });
});

describe('retention settings', () => {
  it('reads days, with the defaults, and 0 as keep forever', () => {
    const c = loadConfig({}).retention;
    expect(c).toMatchObject({
      channelEventsMs: 90 * DAY,
      visitsMs: 90 * DAY,
      conversionsMs: 90 * DAY,
      auditMs: 365 * DAY,
      agentStepsMs: 30 * DAY,
      agentThreadMs: 365 * DAY,
      finishedCardsMs: 365 * DAY,
      modelCallsMs: 90 * DAY,
      inboundMessagesMs: 90 * DAY,
      minuteRollupsMs: 15 * DAY,
      batchRows: 5_000,
    });
    // `/results` reads minute rollups up to 14 days back: fewer days, or forever (0), is refused.
    expect(loadConfig({ MINUTE_ROLLUP_RETENTION_DAYS: '30' }).retention.minuteRollupsMs).toBe(30 * DAY);
    expect(() => loadConfig({ MINUTE_ROLLUP_RETENTION_DAYS: '14' })).toThrow(ConfigError);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '0' }).retention.auditMs).toBeNull();
    expect(() => loadConfig({ RETENTION_BATCH_ROWS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ VISIT_RETENTION_DAYS: '-1' })).toThrow(ConfigError);
  });
});
