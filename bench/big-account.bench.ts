import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import type { Db } from '../src/db.js';
import { upsertLead } from '../src/leads/leads.service.js';
import { rollUpAll } from '../src/results/rollups.service.js';
import { recordTurn } from '../src/agent/messages/agent.service.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { benchCard, fmt, freePort, NO_RATE_LIMITS, seeding, startServer, stop } from './lib.js';
import type { BenchContext, Section } from './run.js';

/**
 * One big account beside a neighbour of the same size and a small account, seeded with SQL `generate_series`
 * (clones of one row each service wrote, so every column is as the service leaves it). BIG_ACCOUNT_EVENTS sets
 * the scale (10,000,000 for the full run); the other kinds follow it: visits a tenth, leads (with a contact
 * each) a hundredth, turns a tenth, cards a fiftieth. The small account has 10,000 events and the same ratios.
 */
const BIG = Number(process.env.BIG_ACCOUNT_EVENTS ?? 10_000_000);
const SMALL = 10_000;
const REQUESTS = Number(process.env.BIG_ACCOUNT_REQUESTS ?? 40);
const DAY = 86_400_000;
const SPREAD = 14 * DAY;

const CHANNEL_TYPES = [
  ['email', 'sent', 'person'],
  ['email', 'reply', null],
  ['email', 'visit', null],
  ['ads', 'spend', 'person'],
  ['ads', 'click', null],
  ['seo', 'visit', null],
  ['social', 'engagement', null],
  ['network', 'message_sent', 'setting'],
] as const;

/** Columns of `table` a clone copies: all but those given and those filled by a sequence. */
async function copied(db: Db, table: string, given: string[]): Promise<string[]> {
  const cols = (await db('information_schema.columns')
    .where({ table_schema: 'public', table_name: table })
    .orderBy('ordinal_position')
    .select('column_name', 'column_default')) as { column_name: string; column_default: string | null }[];
  return cols.filter((c) => !given.includes(c.column_name) && !c.column_default?.startsWith('nextval')).map((c) => c.column_name);
}

/** `count` copies of the row `id` of `table`, `set` giving the columns that differ (SQL over `s` the row and `g` 1..count). */
export async function clone(db: Db, table: string, id: string, count: number, set: Record<string, string>): Promise<void> {
  if (count <= 0) return;
  const cols = await copied(db, table, Object.keys(set));
  const all = [...cols, ...Object.keys(set)];
  await db.raw(
    `INSERT INTO ${table} (${all.join(', ')}) SELECT ${[...cols.map((c) => `s.${c}`), ...Object.values(set)].join(', ')}
       FROM ${table} s, generate_series(1, ${count}) g WHERE s.id = ?`,
    [id],
  );
}

async function seedAccount(db: Db, name: string, events: number, now: number) {
  const account = await createAccount(db, name);
  const a = account.id;
  const col = (i: 0 | 1 | 2) =>
    `(ARRAY[${CHANNEL_TYPES.map((r) => (r[i] ? `'${r[i]}'` : 'NULL')).join(', ')}]::text[])[1 + g % ${CHANNEL_TYPES.length}]`;
  await db.raw(
    `INSERT INTO channel_connections (account_id, channel, connected_at)
     SELECT ?, c, ? FROM unnest(ARRAY['email', 'ads', 'seo', 'social', 'network']) c`,
    [a, now - SPREAD],
  );
  await db.raw(
    `INSERT INTO channel_events (account_id, channel, type, at, decided_by, amount, ref_id, recorded_at)
     SELECT ?, ${col(0)}, ${col(1)}, ? - (g::bigint * ${SPREAD}) / ?, ${col(2)}, CASE WHEN ${col(1)} = 'spend' THEN 100 END, NULL, ?
       FROM generate_series(1, ?) g`,
    [a, now, events, now, events],
  );
  await db.raw(
    `INSERT INTO visits (id, account_id, channel, via, bot, at)
     SELECT ? || '-v' || g, ?, 'seo', 'reported', false, ? - (g::bigint * ${SPREAD}) / ? FROM generate_series(1, ?) g`,
    [a, a, now, Math.ceil(events / 10), Math.ceil(events / 10)],
  );
  const lead = await upsertLead(db, a, {
    domain: 'seed.example',
    companyName: 'Seed',
    status: 'researched',
    contacts: [{ name: 'Seed Person', email: 'p@seed.example' }],
  });
  const leads = Math.ceil(events / 100);
  await clone(db, 'leads', lead.id, leads, { id: `s.id || '-' || g`, domain: `'c' || g || '.example'`, created_at: `s.created_at - g` });
  const contact = (await db('lead_contacts').where({ lead_id: lead.id }).first('id')) as { id: string };
  await clone(db, 'lead_contacts', contact.id, leads, {
    id: `s.id || '-' || g`,
    lead_id: `s.lead_id || '-' || g`,
    email: `'p@c' || g || '.example'`,
  });
  const turn = await recordTurn(db, configWith({}), { accountId: a, kind: 'message', origin: 'dashboard', text: 'hello' });
  const turnId = turn.turn.id;
  await db('agent_turns')
    .where({ id: turnId })
    .update({ status: 'replied', started_at: now - 1000, finished_at: now - 500 });
  const turnTimes = `${now} - (g::bigint * ${SPREAD}) / ${Math.ceil(events / 10)}`;
  await clone(db, 'agent_turns', turnId, Math.ceil(events / 10) - 1, {
    id: `s.id || '-' || g`,
    created_at: turnTimes,
    started_at: turnTimes,
    finished_at: turnTimes,
  });
  const card = await benchCard(db, a, 'outbound_setup', { proposal: { name: 'Weekly outbound' } });
  const cardTimes = `${now} - (g::bigint * ${SPREAD}) / ${Math.ceil(events / 50)}`;
  await clone(db, 'review_cards', card, Math.ceil(events / 50) - 1, {
    id: `s.id || '-' || g`,
    created_at: cardTimes,
    // One card in a hundred still waits for review; the rest were dismissed.
    status: `CASE WHEN g % 100 = 0 THEN s.status ELSE 'dismissed' END`,
    resolved_at: `CASE WHEN g % 100 = 0 THEN NULL ELSE ${cardTimes} END`,
  });
  return a;
}

const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function timed(url: string, token: string): Promise<{ p50: number; p99: number; status: number }> {
  const times: number[] = [];
  let status = 0;
  for (let i = 0; i < REQUESTS + 5; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    status = res.status;
    if (i >= 5) times.push(performance.now() - t);
  }
  return { p50: pct(times, 50), p99: pct(times, 99), status };
}

/**
 * Bytes of the account's rows in the tables it fills (each table's size shared out by row count; a partitioned table's
 * size is its partitions').
 */
async function storage(db: Db, accountId: string): Promise<number> {
  let bytes = 0;
  const rollups = ['channel_event_rollups', 'channel_event_rollups_minute', 'results_rollups', 'results_rollups_minute'];
  for (const t of ['channel_events', 'visits', 'leads', 'lead_contacts', 'agent_turns', 'review_cards', ...rollups]) {
    const { rows } = (await db.raw(
      `SELECT (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(?::regclass))::float8
              * (SELECT count(*) FROM ${t} WHERE account_id = ?)
              / greatest(1, (SELECT count(*) FROM ${t}))::float8 AS b`,
      [t, accountId],
    )) as { rows: { b: number }[] };
    bytes += rows[0]!.b;
  }
  return bytes;
}

/** The three accounts seeded and rolled up, with the big and small accounts' tokens and storage. */
async function seedAll(db: Db, tokenPrefix: string) {
  const now = Date.now();
  const started = performance.now();
  const small = await seedAccount(db, 'Small', SMALL, now);
  const big = await seedAccount(db, 'Big', BIG, now);
  await seedAccount(db, 'Neighbour', BIG, now);
  const seededMs = performance.now() - started;
  const rollStarted = performance.now();
  await rollUpAll(db, 1_000_000);
  const rollMs = performance.now() - rollStarted;
  await db.raw('VACUUM ANALYZE');
  const scopes = ['results:read', 'leads:read', 'review:read', 'agent:message', 'content:read'] as const;
  const tokenOf = async (accountId: string) => (await mintToken(db, tokenPrefix, { accountId, label: 'bench', scopes: [...scopes] })).token;
  return {
    seededMs,
    rollMs,
    tokens: { small: await tokenOf(small), big: await tokenOf(big) },
    bytes: { small: await storage(db, small), big: await storage(db, big) },
  };
}

export async function bigAccount(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  const { seededMs, rollMs, tokens, bytes } = await seeding(config, (db) => seedAll(db, config.tokenPrefix));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await startServer(
    ['bin/start.ts', 'api'],
    { DATABASE_URL: config.databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...NO_RATE_LIMITS },
    `${base}/healthz`,
  );
  const deepCursor = async (token: string) => {
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const url = new URL(`${base}/api/v1/leads?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const next = ((await res.json()) as { nextCursor: string | null }).nextCursor;
      if (!next) break;
      cursor = next;
    }
    return `/api/v1/leads?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  };
  const routes: Array<[string, (token: string) => Promise<string> | string]> = [
    ['GET /results', () => '/api/v1/results'],
    ['GET /results?since=7 days', () => `/api/v1/results?since=${Date.now() - 7 * DAY}`],
    ['GET /leads (first page)', () => '/api/v1/leads?limit=50'],
    ['GET /leads (page 20)', deepCursor],
    ['GET /review', () => '/api/v1/review'],
    ['GET /agent/status', () => '/api/v1/agent/status'],
    ['GET /agent/thread', () => '/api/v1/agent/thread'],
    ['GET /content/posts', () => '/api/v1/content/posts'],
  ];
  const lines: string[] = [];
  try {
    for (const [name, path] of routes) {
      const s = await timed(base + (await path(tokens.small)), tokens.small);
      const b = await timed(base + (await path(tokens.big)), tokens.big);
      lines.push(
        `| ${name} | ${fmt(s.p50, 1)} / ${fmt(s.p99, 1)} | ${fmt(b.p50, 1)} / ${fmt(b.p99, 1)} | ` +
          `${fmt(b.p99 / s.p99, 2)}× | ${s.status}, ${b.status} |`,
      );
    }
  } finally {
    await stop(api);
  }
  const mb = (n: number) => fmt(n / 2 ** 20, 1);
  return {
    title: 'A big account beside a small one',
    body: [
      `Small account: ${SMALL.toLocaleString('en-US')} events; ` +
        `big account and its neighbour: ${BIG.toLocaleString('en-US')} events each, ` +
        `visits a tenth, leads with a contact a hundredth, turns a tenth, cards a fiftieth, all over the last 14 days. ` +
        `Seeding took ${fmt(seededMs / 1000)} s, the first rollup pass over everything ${fmt(rollMs / 1000, 1)} s. ` +
        `${REQUESTS} sequential requests per route and account (after 5 warm-ups), p50 / p99 ms.`,
      '',
      '| route | small p50 / p99 | big p50 / p99 | big p99 / small p99 | status |',
      '|---|---:|---:|---:|---|',
      ...lines,
      '',
      `Storage of the account's rows (tables shared out by row count): small ${mb(bytes.small)} MB, big ${mb(bytes.big)} MB.`,
    ].join('\n'),
  };
}
