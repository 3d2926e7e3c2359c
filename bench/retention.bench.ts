import { createAccount } from '../src/accounts/accounts.service.js';
import { recordTurn } from '../src/agent/messages/agent.service.js';
import type { Db } from '../src/db.js';
import { createLogger } from '../src/logger.js';
import { rollUpAll } from '../src/results/rollups.service.js';
import { runRetentionPass } from '../src/retention/retention.service.js';
import { configWith } from '../test/helpers/config.js';
import { clone } from './big-account.bench.js';
import { benchCard, fmt, seeding } from './lib.js';
import type { BenchContext, Section } from './run.js';

/**
 * Retention at a steady daily volume: RETENTION_BENCH_DAYS days (default 28) of the same day for one account
 * (RETENTION_BENCH_EVENTS channel events a day, default 20,000; visits a tenth, conversions a hundredth, audit
 * rows and finished turns (two steps and a reply each) a twentieth, finished cards a fiftieth), the rollup pass
 * and one retention pass after each day. The retentions are scaled down so the horizon comes within the run:
 * events, visits and conversions 7 days, steps 3, audit, the thread and cards 10. Then one pass over a backlog
 * (everything aged past its retention at once) while a writer inserts channel events without pause: the pass's
 * time, the writer's slowest insert, and how often a backend of its database was seen waiting on a lock (pg_stat_activity, every 5 ms).
 * The default scale runs in about 3.5 minutes on 2 shared cores.
 */
const DAYS = Number(process.env.RETENTION_BENCH_DAYS ?? 28);
const EVENTS = Number(process.env.RETENTION_BENCH_EVENTS ?? 20_000);
const DAY = 86_400_000;
const TABLES = [
  'channel_events',
  'channel_event_refs',
  'visits',
  'conversions',
  'audit_log',
  'agent_turns',
  'agent_turn_steps',
  'agent_replies',
  'review_cards',
];
const log = createLogger('silent');

/** Bytes of the account's live rows in the tables retention trims (pg_column_size of each row). */
async function accountBytes(db: Db, accountId: string): Promise<number> {
  let bytes = 0;
  for (const t of TABLES) {
    const where = t === 'agent_turn_steps' ? 'turn_id IN (SELECT id FROM agent_turns WHERE account_id = ?)' : 'account_id = ?';
    const { rows } = (await db.raw(`SELECT coalesce(sum(pg_column_size(t.*)), 0)::float8 AS b FROM ${t} t WHERE ${where}`, [
      accountId,
    ])) as { rows: { b: number }[] };
    bytes += rows[0]!.b;
  }
  return bytes;
}

/** Bytes on disk of those tables (a partitioned one's partitions) with their indexes, dead rows' space included until reused. */
async function diskBytes(db: Db): Promise<number> {
  const { rows } = (await db.raw(
    `SELECT sum(CASE WHEN c.relkind = 'p' THEN (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(c.oid))
                     ELSE pg_total_relation_size(c.oid) END)::float8 AS b
       FROM unnest(?::text[]) t JOIN pg_class c ON c.oid = t::regclass`,
    [TABLES],
  )) as {
    rows: { b: number }[];
  };
  return rows[0]!.b;
}

/** One day's volume for the account, every row at a time within [start, start + DAY). */
async function seedDay(db: Db, a: string, start: number, templates: { turn: string; card: string }) {
  const t = (n: number) => `${start} + (g::bigint * ${DAY - 1}) / ${n}`;
  // Each event with its ref, as the writers record them (src/results/results.repository.ts).
  await db.raw(
    `WITH e AS (
       INSERT INTO channel_events (account_id, channel, type, at, ref_id, recorded_at)
       SELECT ?, 'seo', 'visit', ${t(EVENTS)}, 'vis_' || ${start} || '_' || g, ${t(EVENTS)} FROM generate_series(1, ${EVENTS}) g
       RETURNING account_id, channel, type, ref_id, at
     )
     INSERT INTO channel_event_refs (account_id, channel, type, ref_id, at) SELECT * FROM e`,
    [a],
  );
  await db.raw(
    `INSERT INTO visits (id, account_id, channel, via, url, at)
     SELECT 'vis_' || ${start} || '_' || g, ?, 'seo', 'link', 'https://example.com/landing', ${t(EVENTS / 10)}
       FROM generate_series(1, ${EVENTS / 10}) g`,
    [a],
  );
  await db.raw(
    `INSERT INTO conversions (account_id, event_id, name, value, currency, channel, occurred_at, received_at, aggregated_at)
     SELECT ?, 'ev_' || ${start} || '_' || g, 'signup', 10, 'USD', 'seo', ${t(EVENTS / 100)}, ${t(EVENTS / 100)}, ${t(EVENTS / 100)}
       FROM generate_series(1, ${EVENTS / 100}) g`,
    [a],
  );
  await db.raw(
    `INSERT INTO audit_log (account_id, actor, method, route, status, at)
     SELECT ?, 'token', 'POST', '/api/v1/agent/message', 202, ${t(EVENTS / 20)} FROM generate_series(1, ${EVENTS / 20}) g`,
    [a],
  );
  const turns = EVENTS / 20;
  await clone(db, 'agent_turns', templates.turn, turns, {
    id: `s.id || '-' || ${start} || '-' || g`,
    client_request_id: 'NULL',
    status: `'replied'`,
    created_at: t(turns),
    not_before: t(turns),
    started_at: t(turns),
    finished_at: t(turns),
  });
  await db.raw(
    `INSERT INTO agent_turn_steps (account_id, turn_id, round, idx, result)
     SELECT ?, ? || '-' || ${start} || '-' || g, 0, i, '{"ok":true,"output":"a tool result of a typical length, forty words or so"}'
       FROM generate_series(1, ${turns}) g, generate_series(0, 1) i`,
    [a, templates.turn],
  );
  await db.raw(
    `INSERT INTO agent_replies (turn_id, account_id, text, at)
     SELECT ? || '-' || ${start} || '-' || g, ?, 'Done: three drafts are waiting for your review.', ${t(turns)}
       FROM generate_series(1, ${turns}) g`,
    [templates.turn, a],
  );
  await clone(db, 'review_cards', templates.card, EVENTS / 50, {
    id: `s.id || '-' || ${start} || '-' || g`,
    created_at: t(EVENTS / 50),
    status: `'dismissed'`,
    resolved_at: t(EVENTS / 50),
  });
}

/** Samples backends waiting on a lock every 5 ms until stopped; answers the samples and the waiting ones seen. */
function lockSampler(db: Db) {
  let on = true;
  let samples = 0;
  let waiting = 0;
  const done = (async () => {
    while (on) {
      const { rows } = (await db.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      )) as {
        rows: { n: number }[];
      };
      samples++;
      waiting += rows[0]!.n;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await done;
      return { samples, waiting };
    },
  };
}

/** A pass over a backlog while a writer inserts without pause: the pass's time, the writer's waits, lock waits seen. */
async function passUnderWrites(db: Db, config: ReturnType<typeof configWith>, a: string, now: number) {
  let writing = true;
  const waits: number[] = [];
  const writer = (async () => {
    while (writing) {
      const t = performance.now();
      await db.raw(`INSERT INTO channel_events (account_id, channel, type, at, recorded_at) VALUES (?, 'seo', 'visit', ?, ?)`, [
        a,
        now,
        now,
      ]);
      waits.push(performance.now() - t);
    }
  })();
  const sampler = lockSampler(db);
  const started = performance.now();
  const pass = await runRetentionPass({ config, db }, log, { now });
  const ms = performance.now() - started;
  writing = false;
  await writer;
  const locks = await sampler.stop();
  const removed = Object.values(pass.removed).reduce((x, y) => x + y, 0);
  waits.sort((x, y) => x - y);
  return {
    ms,
    removed,
    skipped: pass.skipped,
    inserts: waits.length,
    p99: waits[Math.floor(waits.length * 0.99)] ?? 0,
    max: waits.at(-1) ?? 0,
    locks,
  };
}

export async function retention(ctx: BenchContext): Promise<Section> {
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    CHANNEL_EVENT_RETENTION_DAYS: '7',
    VISIT_RETENTION_DAYS: '7',
    CONVERSION_RETENTION_DAYS: '7',
    AGENT_STEP_RETENTION_DAYS: '3',
    AUDIT_RETENTION_DAYS: '10',
    AGENT_THREAD_RETENTION_DAYS: '10',
    FINISHED_CARD_RETENTION_DAYS: '10',
  });
  return seeding(config, async (db) => {
    const a = (await createAccount(db, 'Steady')).id;
    const turn = (await recordTurn(db, config, { accountId: a, kind: 'message', origin: 'dashboard', text: 'hello' })).turn.id;
    const card = await benchCard(db, a, 'outbound_setup', { proposal: { name: 'Weekly outbound' } });
    const start = Math.floor(Date.now() / DAY) * DAY - DAYS * DAY;
    const series: string[] = [];
    const passMs: number[] = [];
    // The month partitions of visits and channel events from the first simulated day on, as the maintenance sweep would have made them.
    await runRetentionPass({ config, db }, log, { now: start });
    for (let d = 0; d < DAYS; d++) {
      await seedDay(db, a, start + d * DAY, { turn, card });
      await rollUpAll(db, 1_000_000);
      const t = performance.now();
      const pass = await runRetentionPass({ config, db }, log, { now: start + (d + 1) * DAY });
      passMs.push(performance.now() - t);
      const removed = Object.values(pass.removed).reduce((x, y) => x + y, 0);
      await db.raw(`VACUUM ${TABLES.join(', ')}`);
      const account = fmt((await accountBytes(db, a)) / 2 ** 20, 1);
      const disk = fmt((await diskBytes(db)) / 2 ** 20, 1);
      const dropped = pass.partitions.dropped.join(', ');
      series.push(`| ${d + 1} | ${account} | ${disk} | ${removed.toLocaleString('en-US')} | ${dropped} | ${fmt(passMs.at(-1)!, 0)} |`);
    }
    // A backlog: the same history again, all of it past every retention at once, removed by one pass under writes.
    const old = start - 40 * DAY;
    for (let d = 0; d < 4; d++) await seedDay(db, a, old + d * DAY, { turn, card: card });
    await rollUpAll(db, 1_000_000);
    await db.raw('ANALYZE');
    const before = await accountBytes(db, a);
    const backlog = await passUnderWrites(db, config, a, start + DAYS * DAY);
    const after = await accountBytes(db, a);
    const mb = (n: number) => fmt(n / 2 ** 20, 1);
    return {
      title: 'Retention at a steady daily volume',
      body: [
        `One account, ${DAYS} days of the same day: ${EVENTS.toLocaleString('en-US')} channel events, ` +
          `${(EVENTS / 10).toLocaleString('en-US')} visits, ${EVENTS / 100} conversions, ${EVENTS / 20} audit rows and finished turns ` +
          `(two steps and a reply each), ${EVENTS / 50} finished cards a day ` +
          '(RETENTION_BENCH_DAYS, RETENTION_BENCH_EVENTS). Retentions scaled down so the horizon falls within the run: ' +
          'events, visits and ' +
          'conversions 7 days, steps 3, audit, thread and cards 10. After each day: the rollup pass, one retention pass (defaults: ' +
          'batches of 5,000, 20 a kind), VACUUM. Account MB: the live bytes of its rows in the trimmed tables; disk MB: those tables ' +
          'with their indexes; visits and channel events are partitioned by month, and a month wholly past its retention is ' +
          'dropped; each event carries a ref (channel_event_refs, trimmed by rows).',
        '',
        '| day | account MB | disk MB | rows removed | partitions dropped | pass ms |',
        '|---:|---:|---:|---:|---|---:|',
        ...series,
        '',
        `One pass over a backlog (4 more days, all past every retention) while a writer inserts channel events without pause: ` +
          `${backlog.removed.toLocaleString('en-US')} rows removed in ${fmt(backlog.ms, 0)} ms` +
          `${backlog.skipped.length ? ` (skipped: ${backlog.skipped.join(', ')})` : ''}; ` +
          `the writer made ${backlog.inserts.toLocaleString('en-US')} inserts, p99 ${fmt(backlog.p99, 1)} ms, ` +
          `slowest ${fmt(backlog.max, 1)} ms; backends seen waiting on a lock: ` +
          `${backlog.locks.waiting} in ${backlog.locks.samples} samples. ` +
          `Account storage before the pass ${mb(before)} MB, after ${mb(after)} MB.`,
      ].join('\n'),
    };
  });
}
