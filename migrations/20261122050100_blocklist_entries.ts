import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('blocklist_entries', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigIncrements('seq', { primaryKey: false });
    // 'domain' | 'email' | 'network'
    t.text('kind').notNullable();
    // Normalised (see src/blocklist/normalise.ts); the unique key makes adding idempotent.
    t.text('value').notNullable();
    t.text('reason');
    // 'customer_import' | 'customer' | 'agent' | 'opt_out_reply' | 'api'
    t.text('source').notNullable();
    t.text('added_by');
    t.bigInteger('added_at').notNullable();
    t.unique(['account_id', 'value']);
    t.index(['account_id', 'added_at', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('blocklist_entries');
}
