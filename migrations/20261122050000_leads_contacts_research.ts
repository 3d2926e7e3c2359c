import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('leads', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // Insertion order: breaks ties between leads created in the same millisecond (keyset paging).
    t.bigIncrements('seq', { primaryKey: false });
    // Normalised: lowercase, no scheme, no www., no trailing dot. One lead per domain per account.
    t.text('domain').notNullable();
    t.text('company_name');
    t.text('status').notNullable();
    t.text('reply_kind');
    t.text('decline_reason');
    t.integer('score');
    t.jsonb('score_reasons').notNullable().defaultTo('[]');
    t.text('vertical');
    t.text('archetype');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    // Values for the account's lead columns, keyed by column key.
    t.jsonb('fields').notNullable().defaultTo('{}');
    t.text('draft_subject');
    t.text('draft_body');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['account_id', 'domain']);
    t.index(['account_id', 'created_at', 'seq']);
    t.index(['account_id', 'status', 'created_at', 'seq']);
  });
  await knex.schema.createTable('lead_contacts', (t) => {
    t.text('id').primary();
    t.text('lead_id').notNullable().references('leads.id').onDelete('CASCADE');
    t.text('account_id').notNullable();
    t.bigIncrements('seq', { primaryKey: false });
    t.text('name');
    t.text('email');
    t.text('title');
    t.text('profile_url');
    t.bigInteger('created_at').notNullable();
    t.index(['lead_id', 'seq']);
  });
  await knex.schema.createTable('lead_research', (t) => {
    t.text('lead_id').notNullable().references('leads.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.bigIncrements('seq', { primaryKey: false });
    t.text('reasoning').notNullable();
    // [{ url, title }] as the agent gave them; the detail form applies the caps of spec 2.8.
    t.jsonb('sources').notNullable().defaultTo('[]');
    t.bigInteger('updated_at').notNullable();
    t.primary(['lead_id', 'key']);
  });
  await knex.schema.createTable('lead_columns', (t) => {
    t.text('account_id').primary().references('accounts.id').onDelete('CASCADE');
    t.specificType('keys', 'text[]').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('lead_columns');
  await knex.schema.dropTable('lead_research');
  await knex.schema.dropTable('lead_contacts');
  await knex.schema.dropTable('leads');
}
