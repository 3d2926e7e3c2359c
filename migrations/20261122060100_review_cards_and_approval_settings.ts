import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Every field of spec 2.2 plus the owning account; the review-queue issue extends this table.
  await knex.schema.createTable('review_cards', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('source_type').notNullable();
    t.text('status').notNullable();
    t.text('title').notNullable();
    t.text('prompt').notNullable().defaultTo('');
    t.text('summary').notNullable().defaultTo('');
    t.jsonb('detail');
    t.text('priority').notNullable().defaultTo('normal');
    t.jsonb('options');
    t.jsonb('text_input');
    t.jsonb('budget_change');
    t.jsonb('payload').notNullable().defaultTo('{}');
    t.specificType('actions', 'text[]').notNullable();
    t.text('primary_label').notNullable();
    t.bigInteger('auto_resolve_at');
    t.bigInteger('due_at');
    t.bigInteger('snoozed_until');
    t.text('lead_id');
    t.text('lead_contact_id');
    t.text('post_id');
    // The turn whose tool call created the card (null for cards from elsewhere).
    t.text('turn_id');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('resolved_at');
    t.jsonb('resolution');
    t.index(['account_id', 'status', 'created_at']);
  });
  // Per account and kind of work: may it run without a person's approval? No row means approval.
  await knex.schema.createTable('approval_settings', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind_of_work').notNullable();
    t.boolean('requires_approval').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['account_id', 'kind_of_work']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('approval_settings');
  await knex.schema.dropTable('review_cards');
}
