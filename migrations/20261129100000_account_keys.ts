import type { Knex } from 'knex';

/**
 * Every key carries the account, so the schema can be distributed by `account_id` (Citus, docs/scaling.md
 * "Distribution by account"; docs/decisions/sharding.md): child tables that had no `account_id` get it from
 * their parent row, primary keys become `(account_id, …old key)`, unique indexes lead with `account_id`, and
 * foreign keys between account tables become `(account_id, x_id) → parent (account_id, id)`.
 *
 * Ids stay unique in practice (random or from a sequence), and lookups that start from something other than
 * the account (an id alone, a token hash, a reply token, a Message-ID, a link code) keep a plain index on what
 * they look up, so no query plan gets worse on one Postgres. Constraint names stay as they were.
 * `inbound_messages` keeps its key on `id`: its `account_id` is NULL until the message is placed.
 * One transaction; on a database with data it takes each table's ACCESS EXCLUSIVE lock while its keys are rebuilt.
 */

/** Child tables without `account_id`: the column is filled from the parent the foreign key names. */
const CHILDREN = [
  { table: 'agent_turn_steps', column: 'turn_id', parent: 'agent_turns' },
  { table: 'lead_research', column: 'lead_id', parent: 'leads' },
  { table: 'destination_deliveries', column: 'destination_id', parent: 'destinations' },
];

/** Each table's primary key before this migration; after it, `account_id` leads. */
const PRIMARY: Record<string, string[]> = {
  agent_memory: ['id'],
  agent_replies: ['id'],
  agent_reply_wakes: ['turn_id'],
  agent_turn_steps: ['turn_id', 'round', 'idx'],
  agent_turns: ['id'],
  api_tokens: ['id'],
  audit_log: ['id'],
  blocklist_entries: ['id'],
  channel_events: ['id'],
  destination_deliveries: ['id'],
  destinations: ['id'],
  inbound_urls: ['id'],
  lead_contacts: ['id'],
  lead_research: ['lead_id', 'key'],
  leads: ['id'],
  mail_sends: ['id'],
  mail_sequences: ['id'],
  mail_threads: ['send_id'],
  post_publications: ['idempotency_key'],
  posts: ['id'],
  review_cards: ['id'],
  tracked_links: ['code'],
  visits: ['id'],
  webhook_deliveries: ['id'],
  webhook_hooks: ['id'],
  workflow_runs: ['id'],
  workflows: ['id'],
};

/**
 * Append-only tables read by account (or whose readers now name it): their old key gets no index of its own.
 * Every other table keeps a plain index on its old key for the lookups by id alone.
 */
const NO_OLD_KEY_INDEX = new Set(['agent_memory', 'agent_replies', 'agent_turn_steps', 'audit_log', 'channel_events', 'visits']);

/** Indexes the new primary key makes redundant (the same columns). */
const REDUNDANT = [
  { name: 'agent_memory_account_id_id_index', table: 'agent_memory', columns: ['account_id', 'id'] },
  { name: 'audit_log_account_id_id_index', table: 'audit_log', columns: ['account_id', 'id'] },
];

/** Unique keys: `constraint` ones are table constraints, the others (partial) unique indexes. */
const UNIQUE: { table: string; name: string; columns: string[]; where?: string; constraint?: true }[] = [
  {
    table: 'agent_turns',
    name: 'agent_turns_client_request_id',
    columns: ['token_id', 'client_request_id'],
    where: 'client_request_id IS NOT NULL',
  },
  { table: 'api_tokens', name: 'api_tokens_token_hash_unique', columns: ['token_hash'], constraint: true },
  { table: 'destination_deliveries', name: 'destination_deliveries_run_id_unique', columns: ['run_id'], constraint: true },
  { table: 'inbound_urls', name: 'inbound_urls_secret_hash_unique', columns: ['secret_hash'], constraint: true },
  { table: 'mail_sends', name: 'mail_sends_idempotency_key_unique', columns: ['idempotency_key'], constraint: true },
  { table: 'mail_sends', name: 'mail_sends_one_live_per_card_step', columns: ['card_id', 'step'], where: "status <> 'not_sent'" },
  { table: 'mail_sequences', name: 'mail_sequences_card_id_unique', columns: ['card_id'], constraint: true },
  { table: 'mail_threads', name: 'mail_threads_message_id_unique', columns: ['message_id'], constraint: true },
  { table: 'mail_threads', name: 'mail_threads_reply_token_unique', columns: ['reply_token'], constraint: true },
  { table: 'webhook_deliveries', name: 'webhook_deliveries_refusals', columns: ['hook_id', 'minute'], where: 'minute IS NOT NULL' },
  { table: 'webhook_hooks', name: 'webhook_hooks_active_token', columns: ['token_hash'], where: "status = 'active'" },
  { table: 'workflow_runs', name: 'workflow_runs_job_id_unique', columns: ['job_id'], constraint: true },
];

/** Lookups that start from a secret or an outside name, not the account: a plain index on what they look up. */
const LOOKUPS: { table: string; name: string; columns: string[]; where?: string }[] = [
  { table: 'api_tokens', name: 'api_tokens_token_hash', columns: ['token_hash'] },
  { table: 'inbound_urls', name: 'inbound_urls_secret_hash', columns: ['secret_hash'] },
  { table: 'mail_sends', name: 'mail_sends_idempotency_key', columns: ['idempotency_key'] },
  { table: 'mail_threads', name: 'mail_threads_message_id', columns: ['message_id'] },
  { table: 'mail_threads', name: 'mail_threads_reply_token', columns: ['reply_token'] },
  { table: 'webhook_hooks', name: 'webhook_hooks_token_hash', columns: ['token_hash'], where: "status = 'active'" },
  { table: 'workflow_runs', name: 'workflow_runs_job_id', columns: ['job_id'] },
];

/** Foreign keys between account tables; all cascade on delete (and agent_reply_wakes also on update, as before). */
const FOREIGN = [
  { table: 'agent_replies', column: 'turn_id', parent: 'agent_turns' },
  { table: 'agent_reply_wakes', column: 'turn_id', parent: 'agent_turns', onUpdateCascade: true },
  { table: 'agent_turn_steps', column: 'turn_id', parent: 'agent_turns' },
  { table: 'destination_deliveries', column: 'destination_id', parent: 'destinations' },
  { table: 'lead_contacts', column: 'lead_id', parent: 'leads' },
  { table: 'lead_research', column: 'lead_id', parent: 'leads' },
  { table: 'webhook_deliveries', column: 'hook_id', parent: 'webhook_hooks' },
  { table: 'workflow_runs', column: 'workflow_id', parent: 'workflows' },
];

const cols = (columns: string[]) => columns.map((c) => `"${c}"`).join(', ');
const where = (w?: string) => (w ? ` WHERE ${w}` : '');
const fkName = (f: (typeof FOREIGN)[number]) => `${f.table}_${f.column}_foreign`;
const oldKeyIndex = (table: string, key: string[]) => `${table}_${key.join('_')}_index`;

/** A unique key on `columns`, as it was (a constraint or a partial unique index). */
function createUnique(u: (typeof UNIQUE)[number], columns: string[]): string {
  return u.constraint
    ? `ALTER TABLE ${u.table} ADD CONSTRAINT ${u.name} UNIQUE (${cols(columns)})`
    : `CREATE UNIQUE INDEX ${u.name} ON ${u.table} (${cols(columns)})${where(u.where)}`;
}
const dropUnique = (u: (typeof UNIQUE)[number]) =>
  u.constraint ? `ALTER TABLE ${u.table} DROP CONSTRAINT ${u.name}` : `DROP INDEX ${u.name}`;

function createForeign(f: (typeof FOREIGN)[number], byAccount: boolean): string {
  const [from, to] = byAccount ? [`account_id, ${f.column}`, 'account_id, id'] : [f.column, 'id'];
  const onUpdate = f.onUpdateCascade ? ' ON UPDATE CASCADE' : '';
  const references = `REFERENCES ${f.parent} (${to}) ON DELETE CASCADE${onUpdate}`;
  return `ALTER TABLE ${f.table} ADD CONSTRAINT ${fkName(f)} FOREIGN KEY (${from}) ${references}`;
}

async function runAll(knex: Knex, statements: string[]): Promise<void> {
  for (const s of statements) await knex.raw(s);
}

export async function up(knex: Knex): Promise<void> {
  const statements: string[] = [];
  for (const c of CHILDREN) {
    statements.push(
      `ALTER TABLE ${c.table} ADD COLUMN account_id text`,
      `UPDATE ${c.table} t SET account_id = p.account_id FROM ${c.parent} p WHERE p.id = t.${c.column}`,
      `ALTER TABLE ${c.table} ALTER COLUMN account_id SET NOT NULL`,
    );
  }
  for (const f of FOREIGN) statements.push(`ALTER TABLE ${f.table} DROP CONSTRAINT ${fkName(f)}`);
  for (const r of REDUNDANT) statements.push(`DROP INDEX ${r.name}`);
  for (const [table, key] of Object.entries(PRIMARY)) {
    statements.push(
      `ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey, ADD CONSTRAINT ${table}_pkey PRIMARY KEY (account_id, ${cols(key)})`,
    );
    if (!NO_OLD_KEY_INDEX.has(table)) statements.push(`CREATE INDEX ${oldKeyIndex(table, key)} ON ${table} (${cols(key)})`);
  }
  for (const u of UNIQUE) statements.push(dropUnique(u), createUnique(u, ['account_id', ...u.columns]));
  for (const l of LOOKUPS) statements.push(`CREATE INDEX ${l.name} ON ${l.table} (${cols(l.columns)})${where(l.where)}`);
  for (const f of FOREIGN) statements.push(createForeign(f, true));
  await runAll(knex, statements);
}

export async function down(knex: Knex): Promise<void> {
  const statements: string[] = [];
  for (const f of FOREIGN) statements.push(`ALTER TABLE ${f.table} DROP CONSTRAINT ${fkName(f)}`);
  for (const l of LOOKUPS) statements.push(`DROP INDEX ${l.name}`);
  for (const u of UNIQUE) statements.push(dropUnique(u), createUnique(u, u.columns));
  for (const [table, key] of Object.entries(PRIMARY)) {
    if (!NO_OLD_KEY_INDEX.has(table)) statements.push(`DROP INDEX ${oldKeyIndex(table, key)}`);
    statements.push(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey, ADD CONSTRAINT ${table}_pkey PRIMARY KEY (${cols(key)})`);
  }
  for (const r of REDUNDANT) statements.push(`CREATE INDEX ${r.name} ON ${r.table} (${cols(r.columns)})`);
  for (const f of FOREIGN) statements.push(createForeign(f, false));
  for (const c of CHILDREN) statements.push(`ALTER TABLE ${c.table} DROP COLUMN account_id`);
  await runAll(knex, statements);
}
