import type { Knex } from 'knex';

/**
 * Approval settings gain the trust ladder's switch per kind of work (docs/dashboard.md, "Settings"): a kind
 * that needs approval either climbs the ladder (the default, as before: after enough approvals shipped
 * unchanged new cards resolve themselves unless a person acts) or always asks (the ladder never sets a
 * deadline). A kind set to run without approval ships whatever this says.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approval_settings', (t) => {
    t.boolean('trust_ladder').notNullable().defaultTo(true);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approval_settings', (t) => {
    t.dropColumn('trust_ladder');
  });
}
