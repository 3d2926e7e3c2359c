import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Refused (429) deliveries of one hook in one minute share one row that counts them, so a sender
  // hammering a hook URL costs one row a minute, not one a request.
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    // How many deliveries the row stands for: 1, except on a refusals row.
    t.integer('deliveries').notNullable().defaultTo(1);
    // Refusals rows only: the minute they fall in (epoch ms, a multiple of 60,000) and the last one's time.
    t.bigInteger('minute');
    t.bigInteger('last_at');
  });
  await knex.raw('CREATE UNIQUE INDEX webhook_deliveries_refusals ON webhook_deliveries (hook_id, minute) WHERE minute IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_refusals');
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('last_at');
    t.dropColumn('minute');
    t.dropColumn('deliveries');
  });
}
