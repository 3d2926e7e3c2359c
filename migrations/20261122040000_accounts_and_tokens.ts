import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accounts', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('api_tokens', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('label').notNullable();
    t.specificType('scopes', 'text[]').notNullable();
    // SHA-256 of the whole token, hex. The token itself is never stored.
    t.text('token_hash').notNullable().unique();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at');
    t.bigInteger('revoked_at');
    t.index(['account_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_tokens');
  await knex.schema.dropTable('accounts');
}
