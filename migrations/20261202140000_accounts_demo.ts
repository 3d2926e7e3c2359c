import type { Knex } from 'knex';

/**
 * A demo account (`seed demo --new-account NAME`): the only kind of account `seed demo` fills, and one whose
 * mail never leaves the machine (its sends go to the local transport whatever MAIL_TRANSPORT is). Every
 * account made before is a real one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.boolean('demo').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('demo');
  });
}
