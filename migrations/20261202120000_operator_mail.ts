import type { Knex } from 'knex';

/**
 * Mail to `postmaster@` the inbound domain (RFC 5321 requires it be accepted): the operator's, not an account's, so
 * a global table beside `dkim_keys` (docs/decisions/inbound-smtp.md, "Mail to postmaster"). Never parsed, never
 * matched to a lead; read with `mail postmaster-list` and `mail postmaster-read`; deleted by retention.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_mail', (t) => {
    t.text('id').primary();
    t.text('mail_from');
    t.jsonb('rcpt_to').notNullable().defaultTo('[]');
    t.text('client_ip');
    t.text('helo');
    t.integer('size').notNullable();
    t.binary('raw').notNullable();
    t.bigInteger('received_at').notNullable();
  });
  await knex.raw('CREATE INDEX operator_mail_received_at ON operator_mail (received_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operator_mail');
}
