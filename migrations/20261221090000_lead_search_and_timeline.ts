import type { Knex } from 'knex';

/**
 * The dashboard's lead search and a lead's timeline (docs/dashboard.md, "Leads"), and the retention of finished
 * imports (docs/decisions/retention.md):
 * - trigram indexes (pg_trgm, with btree_gin so the account is a column of the same GIN index) on a lead's searched
 *   text (domain and company) and a contact's (address and name), for `q` matched anywhere in them;
 * - a lead's sends (`mail_threads`), its replies and bounces (`inbound_messages`) and its visits (`visits`) by lead,
 *   newest first;
 * - finished imports by when they finished.
 * Built CONCURRENTLY (outside a transaction) so writers never wait on the build; `visits` is partitioned, and a
 * partitioned table's index cannot be built concurrently, so it is made on the parent alone, then on each partition
 * concurrently and attached (a partition made later gets it from the parent).
 */
export const config = { transaction: false };

/** The texts the search matches; the leads repository's queries use these very expressions (src/leads/search.ts). */
const LEAD_TEXT = `(domain || ' ' || lower(coalesce(company_name, '')))`;
const CONTACT_TEXT = `lower(coalesce(email, '') || ' ' || coalesce(name, ''))`;

const INDEXES: Array<[name: string, on: string]> = [
  ['leads_search_text', `leads USING gin (account_id, ${LEAD_TEXT} gin_trgm_ops)`],
  ['lead_contacts_search_text', `lead_contacts USING gin (account_id, ${CONTACT_TEXT} gin_trgm_ops)`],
  ['mail_threads_account_lead', 'mail_threads (account_id, lead_id, created_at) WHERE lead_id IS NOT NULL'],
  ['inbound_messages_account_lead', 'inbound_messages (account_id, lead_id, received_at) WHERE lead_id IS NOT NULL'],
  ['lead_imports_finished_at', "lead_imports (finished_at) WHERE state IN ('done', 'failed')"],
];
const VISITS_INDEX = 'visits_account_lead_at';
const VISITS_ON = '(account_id, lead_id, at) WHERE lead_id IS NOT NULL';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.raw('CREATE EXTENSION IF NOT EXISTS btree_gin');
  for (const [name, on] of INDEXES) await knex.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${on}`);
  const { rows } = (await knex.raw(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'visits'::regclass ORDER BY 1`,
  )) as { rows: { name: string }[] };
  const partitioned = (await knex.raw(`SELECT relkind FROM pg_class WHERE oid = 'visits'::regclass`)).rows[0].relkind === 'p';
  if (!partitioned) {
    await knex.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${VISITS_INDEX} ON visits ${VISITS_ON}`);
    return;
  }
  await knex.raw(`CREATE INDEX IF NOT EXISTS ${VISITS_INDEX} ON ONLY visits ${VISITS_ON}`);
  for (const { name } of rows) {
    const index = `${name}_account_lead_at`;
    await knex.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index} ON ${name} ${VISITS_ON}`);
    const attached = await knex.raw(`SELECT 1 FROM pg_inherits WHERE inhrelid = ?::regclass`, [index]);
    if (!attached.rows.length) await knex.raw(`ALTER INDEX ${VISITS_INDEX} ATTACH PARTITION ${index}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS ${VISITS_INDEX}`);
  for (const [name] of INDEXES) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}
