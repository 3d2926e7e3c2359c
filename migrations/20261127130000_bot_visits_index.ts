import type { Knex } from 'knex';

/**
 * Bot and link-scanner visits are kept raw for a short window only (LINK_BOT_VISIT_RETENTION_DAYS): the
 * maintenance sweep deletes the oldest in bounded chunks, found through this partial index without
 * reading the counted visits beside them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX visits_bot_at ON visits (at) WHERE bot');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX visits_bot_at');
}
