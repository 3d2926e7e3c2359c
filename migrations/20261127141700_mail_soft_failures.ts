import type { Knex } from 'knex';

/**
 * The relay's 4xx answers at RCPT or DATA per account and recipient address, in a row: a send the relay
 * takes deletes the row, and at MAIL_SOFT_FAILURES_BEFORE_BLOCK the address is treated as a hard bounce.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_soft_failures', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('address').notNullable();
    t.integer('failures').notNullable();
    t.text('last_reply').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['account_id', 'address']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mail_soft_failures');
}
