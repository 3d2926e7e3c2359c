import type { Knex } from 'knex';

/**
 * The ad platform's metrics per test and variant, one row per provider event (`ad_metrics`,
 * read by the ads poll): what `/results` `ads.tests` sums per running test. `event_id` is the provider's
 * event id, so a poll repeated after a crash adds nothing. `test_id` is the id the platform gave the
 * test when it shipped (the fence's `provider_id`); amounts are minor currency units.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ad_metrics', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('event_id').notNullable();
    t.text('test_id').notNullable();
    t.text('variant');
    t.bigInteger('impressions').notNullable();
    t.bigInteger('clicks').notNullable();
    t.bigInteger('spend').notNullable();
    t.bigInteger('conversions').notNullable();
    t.bigInteger('at').notNullable();
    t.primary(['account_id', 'event_id']);
    t.index(['account_id', 'test_id', 'at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ad_metrics');
}
