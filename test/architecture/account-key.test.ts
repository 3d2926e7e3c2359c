import { describe, expect } from 'vitest';
import { it, type TestEnv } from '../helpers/fixture.js';

/**
 * Ready for a Postgres sharded by account (Citus, docs/scaling.md "Distribution by account"): every table carries
 * `account_id`, and every primary key, unique index and foreign key includes it, so a row and everything it
 * points at live on the same shard. Read from the catalog after migrations.
 */
let env: TestEnv;
it.beforeAll(({ env: e }) => {
  env = e;
});

/** Global tables (Citus reference tables or coordinator-only): a foreign key to one of them is fine. */
const GLOBAL: Record<string, string> = {
  accounts: 'the tenants themselves: the reference table every account_id points at',
  knex_migrations: "the migrator's bookkeeping, on the coordinator only",
  knex_migrations_lock: "the migrator's lock, on the coordinator only",
  service_secrets: "the service's own keys (cookie and token signing), not an account's",
  dkim_keys: 'signing keys per sending domain of the service, shared by every account that sends from it',
  results_rollup_watermark: 'the one watermark of the rollup pass (per node on Citus: docs/decisions/results.md)',
};

/**
 * Breaks of the rule that are still there, each to be fixed by a migration (primary keys become (account_id, id),
 * foreign keys reference (account_id, id), child tables get account_id). The list may only shrink: a new break,
 * or a fixed one still listed, fails the test.
 */
const NOT_YET = [
  'agent_memory: primary key agent_memory_pkey',
  'agent_replies: foreign key agent_replies_turn_id_foreign -> agent_turns',
  'agent_replies: primary key agent_replies_pkey',
  'agent_reply_wakes: foreign key agent_reply_wakes_turn_id_foreign -> agent_turns',
  'agent_reply_wakes: primary key agent_reply_wakes_pkey',
  'agent_turn_steps: foreign key agent_turn_steps_turn_id_foreign -> agent_turns',
  'agent_turn_steps: no account_id',
  'agent_turn_steps: primary key agent_turn_steps_pkey',
  'agent_turns: primary key agent_turns_pkey',
  'agent_turns: unique index agent_turns_client_request_id',
  'api_tokens: primary key api_tokens_pkey',
  'api_tokens: unique index api_tokens_token_hash_unique',
  'audit_log: primary key audit_log_pkey',
  'blocklist_entries: primary key blocklist_entries_pkey',
  'channel_events: primary key channel_events_pkey',
  'destination_deliveries: foreign key destination_deliveries_destination_id_foreign -> destinations',
  'destination_deliveries: no account_id',
  'destination_deliveries: primary key destination_deliveries_pkey',
  'destination_deliveries: unique index destination_deliveries_run_id_unique',
  'destinations: primary key destinations_pkey',
  'inbound_messages: primary key inbound_messages_pkey',
  'inbound_urls: primary key inbound_urls_pkey',
  'inbound_urls: unique index inbound_urls_secret_hash_unique',
  'lead_contacts: foreign key lead_contacts_lead_id_foreign -> leads',
  'lead_contacts: primary key lead_contacts_pkey',
  'lead_research: foreign key lead_research_lead_id_foreign -> leads',
  'lead_research: no account_id',
  'lead_research: primary key lead_research_pkey',
  'leads: primary key leads_pkey',
  'mail_sends: primary key mail_sends_pkey',
  'mail_sends: unique index mail_sends_idempotency_key_unique',
  'mail_sends: unique index mail_sends_one_live_per_card_step',
  'mail_sequences: primary key mail_sequences_pkey',
  'mail_sequences: unique index mail_sequences_card_id_unique',
  'mail_threads: primary key mail_threads_pkey',
  'mail_threads: unique index mail_threads_message_id_unique',
  'mail_threads: unique index mail_threads_reply_token_unique',
  'post_publications: primary key post_publications_pkey',
  'posts: primary key posts_pkey',
  'review_cards: primary key review_cards_pkey',
  'tracked_links: primary key tracked_links_pkey',
  'webhook_deliveries: foreign key webhook_deliveries_hook_id_foreign -> webhook_hooks',
  'webhook_deliveries: primary key webhook_deliveries_pkey',
  'webhook_deliveries: unique index webhook_deliveries_refusals',
  'webhook_hooks: primary key webhook_hooks_pkey',
  'webhook_hooks: unique index webhook_hooks_active_token',
  'workflow_runs: foreign key workflow_runs_workflow_id_foreign -> workflows',
  'workflow_runs: primary key workflow_runs_pkey',
  'workflow_runs: unique index workflow_runs_job_id_unique',
  'workflows: primary key workflows_pkey',
];

const BREAKS = `
WITH t AS (SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND NOT (c.relname = ANY (:global))),
acc AS (SELECT attrelid, attnum FROM pg_attribute WHERE attname = 'account_id' AND NOT attisdropped)
SELECT relname || ': no account_id' AS b FROM t WHERE NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = t.oid)
UNION ALL
SELECT t.relname || ': ' || CASE WHEN i.indisprimary THEN 'primary key ' ELSE 'unique index ' END || ic.relname
  FROM t JOIN pg_index i ON i.indrelid = t.oid AND i.indisunique JOIN pg_class ic ON ic.oid = i.indexrelid
 WHERE NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = t.oid AND acc.attnum = ANY (i.indkey))
UNION ALL
SELECT t.relname || ': foreign key ' || co.conname || ' -> ' || co.confrelid::regclass::text
  FROM t JOIN pg_constraint co ON co.conrelid = t.oid AND co.contype = 'f'
 WHERE NOT (co.confrelid::regclass::text = ANY (:global))
   AND (NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = t.oid AND acc.attnum = ANY (co.conkey))
        OR NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = co.confrelid AND acc.attnum = ANY (co.confkey)))`;

describe('account key rule', () => {
  it('every table but the global ones carries account_id in its keys, unique indexes and foreign keys', async () => {
    const { rows } = (await env.deps.db.raw(BREAKS, { global: Object.keys(GLOBAL) })) as { rows: { b: string }[] };
    const breaks = rows.map((r) => r.b).sort();
    expect(
      breaks.filter((b) => !NOT_YET.includes(b)),
      'tables that break the account key rule',
    ).toEqual([]);
    expect(
      NOT_YET.filter((b) => !breaks.includes(b)),
      'fixed: take them off NOT_YET',
    ).toEqual([]);
  });
});
