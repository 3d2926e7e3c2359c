import type { Knex } from 'knex';

/**
 * A sent mail finds the lead it reaches by the contact's address (mail_threads.lead_id), case
 * insensitive and never across accounts: one index lookup per send instead of a scan of the contacts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX lead_contacts_account_email ON lead_contacts (account_id, lower(email)) WHERE email IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX lead_contacts_account_email');
}
