import { describe, expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/logger.js';
import { recordChannelEvents } from '../../src/results/channel-events.js';
import { getResults } from '../helpers/scoreboard.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { buildCard, buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { foldAccount } from '../helpers/rollups.js';
import { leadRow } from '../helpers/rows.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const log = createLogger('silent');
let env: TestEnv;
it.beforeAll(({ env: e }) => {
  env = e;
});

/** Every event of the account in the rollups (test/helpers/rollups.ts). */
const foldAll = (accountId: string) => foldAccount(env.deps.db, accountId);

/** One row of every kind with a retention, `age` ms old, for the account; answers what to look them up by. */
async function history(accountId: string, age: number, now: number) {
  const db = env.deps.db;
  const at = now - age;
  const tag = newId('t').slice(2);
  await recordChannelEvents(db, [{ accountId, event: { channel: 'seo', type: 'visit', at, refId: `ref_${tag}` } }]);
  await db('visits').insert({ id: `vis_${tag}`, account_id: accountId, channel: 'seo', via: 'link', at });
  await db('conversions').insert({
    account_id: accountId,
    event_id: `ev_${tag}`,
    name: 'signup',
    value: 10,
    currency: 'USD',
    channel: 'seo',
    occurred_at: at,
    received_at: at,
    aggregated_at: at,
  });
  await db('audit_log').insert({ account_id: accountId, actor: 'token', method: 'GET', route: '/x', target_id: tag, status: 200, at });
  const turn = `turn_${tag}`;
  await db('agent_turns').insert({
    id: turn,
    account_id: accountId,
    kind: 'message',
    origin: 'dashboard',
    status: 'replied',
    created_at: at,
    not_before: at,
    started_at: at,
    finished_at: at,
  });
  await db('agent_turn_steps').insert({ account_id: accountId, turn_id: turn, round: 0, idx: 0, result: JSON.stringify({ ok: true }) });
  await db('agent_replies').insert({ turn_id: turn, account_id: accountId, text: 'done', at });
  const card = await buildCard(db, accountId, 'plain');
  await db.raw(`UPDATE review_cards SET status = 'dismissed', resolved_at = ?, created_at = ? WHERE id = ?`, [at, at, card.id]);
  await db('agent_model_calls')
    .insert({ account_id: accountId, day: new Date(at).toISOString().slice(0, 10), calls: 3 })
    .onConflict(['account_id', 'day'])
    .ignore();
  return { tag, turn, card: card.id };
}

async function present(accountId: string, h: { tag: string; turn: string; card: string }) {
  const db = env.deps.db;
  const has = async (table: string, where: Record<string, unknown>) => (await db(table).where(where).first()) !== undefined;
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
  it('removes what is past each kind’s retention, keeps what is not, and never touches leads, contacts or the block list', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const ancient = await history(accountId, 400 * DAY, now);
    const middling = await history(accountId, 60 * DAY, now);
    const fresh = await history(accountId, DAY, now);
    const lead = await buildLead(env.deps.db, accountId, { domain: 'kept.example.com' });
    await env.deps.db.raw('UPDATE leads SET created_at = 0, updated_at = 0 WHERE id = ?', [lead.id]);
    await env.deps
      .db('lead_contacts')
      .insert({ id: newId('lc'), lead_id: lead.id, account_id: accountId, email: 'a@kept.example.com', created_at: 0 });
    await env.deps.db('blocklist_entries').insert({
      id: newId('blk'),
      account_id: accountId,
      kind: 'email',
      value: 'optout@kept.example.com',
      source: 'opt_out',
      added_at: 0,
    });
    await foldAll(accountId);

    const pass = await runRetentionPass(env.deps, log, { now });
    expect(pass.skipped).toEqual([]);
    expect(pass.removed.modelCalls).toBeGreaterThanOrEqual(1);

    expect(await present(accountId, ancient)).toEqual(NONE);
    // 60 days: only the steps of a finished turn (30 days) have gone.
    expect(await present(accountId, middling)).toEqual({ ...ALL, agentSteps: false });
    expect(await present(accountId, fresh)).toEqual(ALL);
    expect(await leadRow(env, lead.id)).toBeDefined();
    expect(await env.deps.db('lead_contacts').where({ lead_id: lead.id })).toHaveLength(1);
    expect(await env.deps.db('blocklist_entries').where({ account_id: accountId })).toHaveLength(1);
    expect(await env.deps.db('agent_model_calls').where({ account_id: accountId }).pluck('day')).toHaveLength(2);
  });

  it('leaves a channel event the rollups have not counted yet, however old its time', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const late = await history(accountId, 200 * DAY, now);
    expect((await runRetentionPass(env.deps, log, { now, only: ['channelEvents'] })).removed).toEqual({ channelEvents: 0 });
    expect((await present(accountId, late)).channelEvents).toBe(true);
    await foldAll(accountId);
    expect((await runRetentionPass(env.deps, log, { now, only: ['channelEvents'] })).removed.channelEvents).toBeGreaterThanOrEqual(1);
    expect((await present(accountId, late)).channelEvents).toBe(false);
  });

  it('keeps /results of a window older than the raw retention: its counts live in the rollups', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const until = Math.floor((now - 400 * DAY) / HOUR) * HOUR;
    const rows = [];
    for (let i = 1; i <= 5; i++) rows.push(await history(accountId, now - until + i * HOUR, now));
    await foldAll(accountId);
    const before = await getResults(env.deps.db, accountId, until - 2 * DAY, until);
    expect(JSON.stringify(before)).toContain('visit');

    await runRetentionPass(env.deps, log, { now });
    for (const h of rows) expect(await present(accountId, h)).toEqual(NONE);
    await foldAll(accountId);
    expect(await getResults(env.deps.db, accountId, until - 2 * DAY, until)).toEqual(before);
    // The deletes wrote no -1 deltas for the rollups to fold.
    expect(await env.deps.db('results_rollup_deltas').where({ account_id: accountId }).andWhere('n', '<', 0)).toEqual([]);
  });

  it('removes minute rollups after MINUTE_ROLLUP_RETENTION_DAYS (15) and keeps the hourly ones', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const old = await history(accountId, 16 * DAY, now);
    const recent = await history(accountId, 14 * DAY, now);
    await foldAll(accountId);
    const minute = async (table: string, age: number) =>
      env.deps.db(table).where({ account_id: accountId, bucket: Math.floor((now - age) / 60_000) * 60_000 });
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
    expect(await present(accountId, old)).toEqual(ALL);
    expect(await present(accountId, recent)).toEqual(ALL);
    const hour = Math.floor((now - 16 * DAY) / HOUR) * HOUR;
    expect(await env.deps.db('channel_event_rollups').where({ account_id: accountId, bucket: hour })).not.toEqual([]);
  });

  it('is bounded: at most RETENTION_BATCH_ROWS a statement and RETENTION_PASS_BATCHES statements a kind, the rest next pass', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    await env.deps
      .db('audit_log')
      .insert(
        Array.from({ length: 7 }, (_, i) => ({ account_id: accountId, actor: 'token', method: 'GET', route: '/b', status: 200, at: i })),
      );
    const auditLeft = async () =>
      Number((await env.deps.db('audit_log').where({ account_id: accountId, route: '/b' }).count({ n: '*' }))[0]!.n);
    const counts: number[] = [];
    for (let i = 0; i < 5 && (await auditLeft()) > 0; i++) {
      counts.push((await runRetentionPass(env.deps, log, { now, only: ['audit'], batchRows: 2, passBatches: 2 })).removed.audit!);
    }
    // 7 rows, at most 2 statements of 2 rows a pass: two passes at least, none removing more than 4 (of any account).
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...counts)).toBe(4);
    expect(await auditLeft()).toBe(0);
  });

  it('gives up a kind rather than wait behind a writer’s lock, and a writer does not wait behind it', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    await env.deps.db('audit_log').insert({ account_id: accountId, actor: 'token', method: 'GET', route: '/held', status: 200, at: 1 });
    const holder = await env.deps.db.transaction();
    try {
      // A table lock takes no transaction id, so it never holds back the rollups' watermark (other files' tests).
      await holder.raw('LOCK TABLE audit_log IN SHARE MODE');
      const started = Date.now();
      const pass = await runRetentionPass(env.deps, log, { now, only: ['audit'] });
      expect(pass).toMatchObject({ removed: { audit: 0 }, skipped: ['audit'] });
      expect(Date.now() - started).toBeLessThan(env.deps.config.retention.lockTimeoutMs + 2_000);
    } finally {
      await holder.rollback();
    }

    // Writers go on while a pass deletes a large backlog: no insert waits long on it.
    const old = Array.from({ length: 20_000 }, (_, i) => ({
      account_id: accountId,
      actor: 't',
      method: 'GET',
      route: '/o',
      status: 200,
      at: i,
    }));
    for (let i = 0; i < old.length; i += 5_000) await env.deps.db('audit_log').insert(old.slice(i, i + 5_000));
    let writing = true;
    const waits: number[] = [];
    const writer = (async () => {
      while (writing) {
        const t = performance.now();
        await env.deps.db('audit_log').insert({ account_id: accountId, actor: 't', method: 'POST', route: '/new', status: 200, at: now });
        waits.push(performance.now() - t);
      }
    })();
    const pass = await runRetentionPass(env.deps, log, { now, only: ['audit'], batchRows: 1_000 });
    writing = false;
    await writer;
    expect(pass.removed.audit).toBeGreaterThanOrEqual(20_000);
    expect(waits.length).toBeGreaterThan(0);
    expect(Math.max(...waits)).toBeLessThan(1_000);
    expect(await env.deps.db('audit_log').where({ account_id: accountId, route: '/new' })).toHaveLength(waits.length);
  });
});

describe('visits partitioned by month', () => {
  const monthOf = (t: number) => {
    const d = new Date(t);
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const name = `visits_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
    return { name, start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
  };
  const partitions = async () =>
    (
      await env.deps.db.raw(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                             WHERE i.inhparent = 'visits'::regclass`)
    ).rows.map((r: { name: string }) => r.name) as string[];

  it('drops a month whole once all of it is past VISIT_RETENTION_DAYS and makes the months ahead', async () => {
    const now = Date.now();
    const { accountId } = await env.tenant();
    const old = monthOf(now - 300 * DAY);
    await env.deps.db.raw(`CREATE TABLE ${old.name} PARTITION OF visits FOR VALUES FROM (${old.start}) TO (${old.end})`);
    const ahead = monthOf(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() + 2, 1));
    await env.deps.db.raw(`DROP TABLE ${ahead.name}`);
    const rows = [old.start, old.start + DAY, now - DAY].map((at, i) => ({
      id: `vis_part${i}`,
      account_id: accountId,
      channel: 'seo',
      via: 'link',
      at,
    }));
    await env.deps.db('visits').insert(rows);

    const pass = await runRetentionPass(env.deps, log, { now });
    expect(pass.partitions.dropped).toContain(old.name);
    expect(pass.partitions.made).toEqual([ahead.name]);
    const names = await partitions();
    expect(names).not.toContain(old.name);
    expect(names).toEqual(expect.arrayContaining([monthOf(now).name, ahead.name, 'visits_pdefault']));
    expect(await env.deps.db('visits').where({ account_id: accountId }).pluck('id')).toEqual(['vis_part2']);
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
