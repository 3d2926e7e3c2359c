import type { Knex } from 'knex';

/**
 * Mail to `postmaster@` is forwarded to the operator's address when INBOUND_POSTMASTER_FORWARD_TO is set:
 * `forwarded_at` says it went (a second forward job finds it set and does nothing), `forward_tries` bounds the
 * repairs of a forward that keeps failing (docs/decisions/inbound-smtp.md, "Mail to postmaster").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('operator_mail', (t) => {
    t.bigInteger('forwarded_at');
    t.integer('forward_tries').notNullable().defaultTo(0);
  });
  await knex.raw('CREATE INDEX operator_mail_unforwarded ON operator_mail (received_at) WHERE forwarded_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS operator_mail_unforwarded');
  await knex.schema.alterTable('operator_mail', (t) => {
    t.dropColumn('forwarded_at');
    t.dropColumn('forward_tries');
  });
}
