import type { Knex } from 'knex';

/**
 * Each contact of a lead keeps its own mail status (docs/decisions/mail-leads-and-threads.md):
 * - `lead_contacts.status` (`new`, `contacted`, `replied`, `bounced`, `unsubscribed`), with the reply's
 *   kind and decline reason and when it last changed; the lead's status follows from its contacts';
 * - `leads.source`: `agent` for a lead the service made because mail went to an address no lead covered;
 *   null for leads the agent or a person recorded;
 * - `accounts.reply_stops_company`: whether a reply from one contact stops the sequences to the company's
 *   other contacts (default: it does);
 * - `channel_events.demo`: rows `seed demo` wrote, left out of `/results`.
 * Leads the mail loop had already marked hand their status to the contacts mail went to (mail_threads).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('lead_contacts', (t) => {
    t.text('status').notNullable().defaultTo('new');
    t.text('reply_kind');
    t.text('decline_reason');
    t.bigInteger('status_at');
  });
  await knex.schema.alterTable('leads', (t) => {
    t.text('source');
  });
  await knex.schema.alterTable('accounts', (t) => {
    t.boolean('reply_stops_company').notNullable().defaultTo(true);
  });
  await knex.schema.alterTable('channel_events', (t) => {
    t.boolean('demo').notNullable().defaultTo(false);
  });
  await knex.raw(
    `UPDATE lead_contacts AS c SET status = l.status, status_at = l.updated_at,
       reply_kind = CASE WHEN l.status IN ('replied', 'unsubscribed') THEN l.reply_kind END,
       decline_reason = CASE WHEN l.status IN ('replied', 'unsubscribed') THEN l.decline_reason END
     FROM leads AS l
     WHERE c.lead_id = l.id AND l.status IN ('contacted', 'replied', 'bounced', 'unsubscribed') AND c.email IS NOT NULL
       AND EXISTS (SELECT 1 FROM mail_threads t WHERE t.account_id = l.account_id AND t.lead_id = l.id AND t.to_address = lower(c.email))`,
  );
  await knex.raw(`UPDATE channel_events SET demo = true WHERE ref_id LIKE 'seed-%'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('channel_events', (t) => t.dropColumn('demo'));
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('reply_stops_company'));
  await knex.schema.alterTable('leads', (t) => t.dropColumn('source'));
  await knex.schema.alterTable('lead_contacts', (t) => {
    t.dropColumn('status_at');
    t.dropColumn('decline_reason');
    t.dropColumn('reply_kind');
    t.dropColumn('status');
  });
}
