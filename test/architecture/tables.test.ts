import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from './source-files.js';

/**
 * Every table has one owning area (docs/decisions/code-structure.md, "Every table has one owner"): only the owner's
 * files name the table in a query; another area reads or writes it through the owner's repository or door. Areas are
 * those of test/architecture/imports.test.ts (a folder of src/, a file directly in src/, api/, workers/, src/review/cards/).
 */

/** Every table the migrations create → the area that owns it. The staging tables of a migration that partitions a table go with it. */
const OWNER: Readonly<Record<string, string>> = {
  accounts: 'accounts',
  api_tokens: 'tokens',
  audit_log: 'audit',
  service_secrets: 'secrets',
  agent_memory: 'memory',
  blocklist_entries: 'blocklist',
  // Channel events are recorded through results (src/results/channel-events.ts), which folds them into its rollups.
  channel_events: 'results',
  channel_events_partitioned: 'results',
  channel_events_pdefault: 'results',
  channel_events_plain: 'results',
  channel_event_refs: 'results',
  channel_connections: 'results',
  channel_event_rollups: 'results',
  channel_event_rollups_minute: 'results',
  results_rollups: 'results',
  results_rollups_minute: 'results',
  results_rollup_deltas: 'results',
  results_rollup_watermark: 'results',
  tracked_links: 'measurement',
  visits: 'measurement',
  visits_partitioned: 'measurement',
  visits_pdefault: 'measurement',
  visits_plain: 'measurement',
  conversions: 'measurement',
  leads: 'leads',
  lead_columns: 'leads',
  lead_contacts: 'leads',
  lead_research: 'leads',
  posts: 'content',
  post_publications: 'content',
  dkim_keys: 'mail',
  mail_sequences: 'mail',
  mail_threads: 'mail',
  provider_connections: 'channels',
  ad_metrics: 'channels',
  ads_spend_caps: 'channels',
  review_cards: 'review/cards',
  // The outbox of typed events, written in the transaction of the change each reports (src/events/outbox.ts).
  events_outbox: 'events',
  approval_settings: 'review',
  trust_levels: 'review',
  // The shipping path's fences (every kind of shipped work; `mail_sends` is its former name, a view for one
  // release) and the mail refusals it counts.
  shipments: 'shipping',
  mail_sends: 'shipping',
  mail_soft_failures: 'shipping',
  experiments: 'experiments',
  experiment_assignments: 'experiments',
  experiment_defaults: 'experiments',
  agent_turns: 'agent',
  agent_turn_steps: 'agent',
  agent_replies: 'agent',
  agent_reply_wakes: 'agent',
  agent_state: 'agent',
  agent_model_calls: 'agent',
  webhook_hooks: 'webhooks',
  webhook_deliveries: 'webhooks',
  workflows: 'workflows',
  workflow_runs: 'workflows',
  destinations: 'workflows',
  destination_deliveries: 'workflows',
  inbound_urls: 'inbound',
  inbound_messages: 'inbound',
  inbound_account_bytes: 'inbound',
  operator_mail: 'inbound',
};

/** The tables the migrations create, by the names they give them (`createTable('t'`, `CREATE TABLE t`, `ALTER TABLE … RENAME TO t`). */
function migratedTables(): Set<string> {
  const names = new Set<string>();
  const dir = join(ROOT, 'migrations');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    for (const m of text.matchAll(
      /\bcreateTable(?:IfNotExists)?\(\s*['"]([a-z_0-9]+)['"]|\bCREATE TABLE (?:IF NOT EXISTS )?([a-z_0-9]+)\b|\bRENAME TO ([a-z_0-9]+)\b/g,
    )) {
      names.add((m[1] ?? m[2] ?? m[3])!);
    }
  }
  return names;
}

function areaOf(file: string): string {
  for (const nested of ['src/review/cards/', 'src/results/report/']) if (file.startsWith(nested)) return nested.slice(4, -1);
  const parts = file.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  // The agent's sub-areas (src/agent/core/, turns/, tools/, …) share the agent's tables.
  if (parts[1] === 'agent') return 'agent';
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '');
}

/** The code without its comments (a `//` inside a string, as in a URL, stays). */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|(^|[^:'"`\\\w])\/\/.*$/gm, '$1');

const names = Object.keys(OWNER)
  .sort((a, b) => b.length - a.length)
  .join('|');
/**
 * Where code names a table: as a quoted argument of a call (`db('t')`, `.from('t')`, `.join('t as x', …)`,
 * `deleteWhere(q, 't', …)`), as a `table: 't'` field, or after a SQL keyword in query text (`FROM t`, `JOIN t`,
 * `INTO t`, `UPDATE t`, `DELETE FROM t`, `TRUNCATE t`, `LOCK TABLE t`, `ALTER TABLE t`, `REFERENCES t`).
 * Calls that take a word that is not a table (a cursor's kind, a queue's name, an event handler's name, a join's
 * columns: `.on(…)`) are left out.
 */
const NOT_TABLE_CALLS = String.raw`encodeCursor|decodeCursor|defineQueue|\.on`;
const SQL_BEFORE_TABLE = String.raw`FROM|JOIN|INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|LOCK\s+TABLE|ALTER\s+TABLE|REFERENCES`;
const REFERENCES = [
  new RegExp(String.raw`(?<!(?:${NOT_TABLE_CALLS})(?:\([^()]*)?)[(,]\s*(['"\`])(${names})(?:\s+as\s+\w+)?\1\s*(?=[,)])`, 'g'),
  new RegExp(String.raw`\btable:\s*(['"\`])(${names})\1`, 'g'),
  new RegExp(String.raw`\b()(?:${SQL_BEFORE_TABLE})\s+(?:ONLY\s+)?(${names})\b`, 'gi'),
];

/** The tables a text of code names (its comments left out). */
function tablesNamedIn(text: string): string[] {
  const code = withoutComments(text);
  return [...new Set(REFERENCES.flatMap((re) => [...code.matchAll(re)].map((m) => m[2]!)))];
}

/** Each (file, table) a file names, once. */
function references(): { file: string; table: string }[] {
  return sourceFiles().flatMap((file) => tablesNamedIn(readFileSync(join(ROOT, file), 'utf8')).map((table) => ({ file, table })));
}

const refs = references();

describe('table owners', () => {
  it('finds table references (the scanner sees the code)', () => {
    const seen = (file: string, table: string) => refs.some((r) => r.file === file && r.table === table);
    expect(seen('src/leads/leads.repository.ts', 'leads')).toBe(true);
    expect(seen('src/review/cards/cards.repository.ts', 'review_cards')).toBe(true);
    expect(refs.length).toBeGreaterThan(60);
  });

  it('reads query text and knex calls, not words in comments or prose', () => {
    const code = [
      '// counts rows from leads, then update posts',
      "await q('leads as l').join('lead_research as r', 'r.lead_id', 'l.id');",
      "await trx.raw(`DELETE FROM visits WHERE at < ?`); await q.raw('select 1 from conversions');",
      "deleteBatch(q, 'agent_turns', 'finished_at < ?', [before], limit);",
      "const msg = 'the leads of the account';",
      "encodeCursor(secret, 'posts', accountId); defineQueue('shipments', {}); handlers.on('card.decided', 'experiments', f);",
    ].join('\n');
    expect(tablesNamedIn(code).sort()).toEqual(['agent_turns', 'conversions', 'lead_research', 'leads', 'visits']);
  });

  it('gives every table the migrations create one owner, and owns no table they do not create', () => {
    const migrated = migratedTables();
    expect(migrated.size).toBeGreaterThan(50);
    expect({
      unowned: [...migrated].filter((t) => !(t in OWNER)).sort(),
      stale: Object.keys(OWNER).filter((t) => !migrated.has(t)),
    }).toEqual({ unowned: [], stale: [] });
  });

  it('names a table only in its owner area: other areas go through the owner repository or door', () => {
    const foreign = refs
      .filter((r) => areaOf(r.file) !== OWNER[r.table])
      .map((r) => `${r.file} names ${r.table} (owned by ${OWNER[r.table]})`);
    expect(foreign).toEqual([]);
  });
});
