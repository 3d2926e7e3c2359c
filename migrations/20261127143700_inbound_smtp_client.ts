import type { Knex } from 'knex';

/**
 * What the SMTP listener knew of the client that handed a message over, kept so processing can check the
 * sender's SPF and DMARC itself: the client's IP address and the name it gave in HELO/EHLO (null for mail
 * that came in on an inbound URL). `mail_threads_to_address`: mail received over SMTP with no token or
 * thread header finds the only account that mailed its sender (src/inbound/smtp-sender.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('inbound_messages', (t) => {
    t.text('client_ip');
    t.text('helo');
  });
  await knex.raw('CREATE INDEX mail_threads_to_address ON mail_threads (to_address, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX mail_threads_to_address');
  await knex.schema.alterTable('inbound_messages', (t) => {
    t.dropColumn('client_ip');
    t.dropColumn('helo');
  });
}
