import type { Knex } from 'knex';

/**
 * A network message finds the lead it reaches, and a network reply the lead who answered, by the contact's
 * canonical profile URL, never across accounts: one index lookup instead of a scan of the contacts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX lead_contacts_account_profile ON lead_contacts (account_id, profile_url) WHERE profile_url IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX lead_contacts_account_profile');
}
