import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('review_cards', (t) => {
    // The kind of work the card ships (email, sequence, …): the trust ladder counts per kind.
    t.text('kind_of_work');
    // Cards that arose from outside data (webhook payloads) never auto-resolve.
    t.boolean('from_outside').notNullable().defaultTo(false);
    // False until the trust ladder has looked at the card (cards inserted by the agent's tools).
    t.boolean('ladder_checked').notNullable().defaultTo(false);
    t.integer('version').notNullable().defaultTo(1);
    // Earlier versions and the changes asked of each: [{ version, requestedChanges, at, previous }].
    t.jsonb('history').notNullable().defaultTo('[]');
    t.text('requested_changes');
    t.bigInteger('revision_due_at');
    t.text('revision_turn_id');
    t.index(['status', 'auto_resolve_at']);
    t.index(['status', 'snoozed_until']);
    t.index(['status', 'revision_due_at']);
  });

  // Trust per account and kind of work: approvals shipped unchanged since the last dismiss.
  await knex.schema.createTable('trust_levels', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind_of_work').notNullable();
    t.integer('approved_unchanged').notNullable().defaultTo(0);
    t.bigInteger('updated_at').notNullable();
    t.primary(['account_id', 'kind_of_work']);
  });

  // The send fence: one row per mail card, written before the provider is called.
  await knex.schema.createTable('mail_sends', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('card_id').notNullable();
    t.text('idempotency_key').notNullable().unique();
    // sending → sent | pending (answer lost) → sent | not_sent | unknown (a person decides)
    t.text('status').notNullable();
    t.text('to_address').notNullable();
    t.text('subject').notNullable();
    t.text('body').notNullable();
    t.text('decided_by').notNullable();
    t.text('provider_id');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.bigInteger('reconcile_until');
    t.text('question_card_id');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('settled_at');
    t.index(['status', 'updated_at']);
  });
  // At most one live fence per card; a send that never reached the provider (not_sent) frees the card.
  await knex.raw(`CREATE UNIQUE INDEX mail_sends_one_live_per_card ON mail_sends (card_id) WHERE status <> 'not_sent'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mail_sends');
  await knex.schema.dropTable('trust_levels');
  await knex.schema.alterTable('review_cards', (t) => {
    for (const c of [
      'kind_of_work',
      'from_outside',
      'ladder_checked',
      'version',
      'history',
      'requested_changes',
      'revision_due_at',
      'revision_turn_id',
    ])
      t.dropColumn(c);
  });
}
