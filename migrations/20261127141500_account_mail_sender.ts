import type { Knex } from 'knex';

/**
 * An account's own sending identity (`mail sender set`): the From its mail carries, `Name <addr>` at a
 * domain the operator allowed. Null: MAIL_FROM. When it was set, for the operator's record.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.text('mail_from').nullable();
    t.bigInteger('mail_from_set_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('mail_from_set_at');
    t.dropColumn('mail_from');
  });
}
