import type { Knex } from 'knex';

/**
 * The events' outbox (docs/architecture.md, "Events"): one row per event, written in the transaction of the change
 * it reports (a card's decision), so an event is recorded exactly when its change commits. `handled` lists the
 * handlers that finished with it; `done_at` is set once all of them did. The maintenance sweep queues again the rows
 * left without `done_at`, a bounded number of times (`sweeps`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events_outbox', (t) => {
    t.text('account_id').notNullable();
    t.text('id').notNullable();
    t.text('name').notNullable();
    t.jsonb('payload').notNullable();
    t.specificType('handled', 'text[]').notNullable().defaultTo('{}');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('done_at');
    t.integer('sweeps').notNullable().defaultTo(0);
    t.primary(['account_id', 'id']);
  });
  await knex.raw('CREATE INDEX events_outbox_undelivered ON events_outbox (created_at) WHERE done_at IS NULL');
  await knex.raw('CREATE INDEX events_outbox_delivered ON events_outbox (done_at) WHERE done_at IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events_outbox');
}
