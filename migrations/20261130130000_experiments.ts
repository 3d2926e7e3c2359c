import type { Knex } from 'knex';

/**
 * Experiments the agent runs (docs/decisions/experiments.md): the experiment with its plan, looks and decision; one
 * assignment per contact, written when the experiment starts and before any mail of it is drafted, so a retried or
 * reconciled send never switches a contact's variant; and the defaults a decided experiment made. Every key leads
 * with account_id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('experiments', (t) => {
    t.text('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.text('id').notNullable();
    t.primary(['account_id', 'id']);
    t.text('card_id');
    // proposed → running → decided | no_winner; proposed → dismissed.
    t.text('status').notNullable().defaultTo('proposed');
    // What varies: mail_subject, mail_opening.
    t.text('thing').notNullable();
    t.text('topic').notNullable();
    t.jsonb('plan').notNullable();
    // The mail every variant starts from: { subject, body }.
    t.jsonb('draft').notNullable();
    // Who gets it: [{ leadId, email }], chosen when proposed.
    t.jsonb('audience').notNullable();
    t.jsonb('looks').notNullable().defaultTo('[]');
    t.jsonb('decision');
    t.text('winner_key');
    t.text('result_card_id');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('started_at');
    t.bigInteger('decided_at');
    t.bigInteger('adopted_at');
    t.index(['account_id', 'status']);
  });
  await knex.raw(`CREATE INDEX experiments_running ON experiments (started_at) WHERE status = 'running'`);
  await knex.schema.createTable('experiment_assignments', (t) => {
    t.text('account_id').notNullable();
    t.text('experiment_id').notNullable();
    // The contact as assignVariant hashes it (normaliseContact).
    t.text('contact').notNullable();
    t.primary(['account_id', 'experiment_id', 'contact']);
    t.foreign(['account_id', 'experiment_id']).references(['account_id', 'id']).inTable('experiments').onDelete('CASCADE');
    t.text('lead_id');
    t.integer('variant_index').notNullable();
    t.text('variant_key').notNullable();
    // The mail card drafted for it, once drafted; null before.
    t.text('card_id');
    // Left out before drafting (blocked, the lead stopped): never exposed, never counted.
    t.text('skipped');
    t.bigInteger('assigned_at').notNullable();
    t.bigInteger('exposed_at');
    t.bigInteger('replied_at');
    t.bigInteger('positive_at');
  });
  await knex.raw(
    'CREATE UNIQUE INDEX experiment_assignments_card ON experiment_assignments (account_id, card_id) WHERE card_id IS NOT NULL',
  );
  await knex.raw(
    `CREATE INDEX experiment_assignments_undrafted ON experiment_assignments (account_id, experiment_id)
      WHERE card_id IS NULL AND skipped IS NULL`,
  );
  // A click or conversion outcome is a visit through a tracked link of the contact's mail card.
  await knex.raw('CREATE INDEX visits_account_card ON visits (account_id, card_id) WHERE card_id IS NOT NULL');
  await knex.schema.createTable('experiment_defaults', (t) => {
    t.text('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    t.text('thing').notNullable();
    // The topic lower-cased and trimmed: later drafts about the same topic use the value.
    t.text('topic_key').notNullable();
    t.primary(['account_id', 'thing', 'topic_key']);
    t.text('value').notNullable();
    t.text('experiment_id').notNullable();
    t.bigInteger('adopted_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('experiment_defaults');
  await knex.raw('DROP INDEX visits_account_card');
  await knex.schema.dropTable('experiment_assignments');
  await knex.schema.dropTable('experiments');
}
