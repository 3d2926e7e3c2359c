import type { Knex } from 'knex';

/**
 * Secrets the service makes for itself (the list-cursor key), one row per name. Written once, by the
 * first process to start; every process of the deployment reads the same row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('service_secrets', (t) => {
    t.text('name').primary();
    t.text('value').notNullable();
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('service_secrets');
}
