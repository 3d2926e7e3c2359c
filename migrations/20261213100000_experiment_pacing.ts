import type { Knex } from 'knex';

/**
 * Experiments mailed in waves, looked at in rotation (docs/decisions/experiments-pacing.md, "Pacing: a wave per look" and
 * "Fair across accounts"): when the maintenance pass last attended to a running experiment and when it should next
 * (its wave's look is due once the wave's last mail is a reply window old), and, once it ends, how many of the
 * plan's contacts it never mailed. The partial index serves the pass's pick: running experiments due by now (none
 * yet, as every running one is here and a new one is: due at once).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('experiments', (t) => {
    t.bigInteger('looked_at');
    t.bigInteger('next_look_at');
    t.integer('spared');
  });
  await knex.raw(`CREATE INDEX experiments_due ON experiments (next_look_at, account_id) WHERE status = 'running'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX experiments_due');
  await knex.schema.alterTable('experiments', (t) => {
    t.dropColumn('looked_at');
    t.dropColumn('next_look_at');
    t.dropColumn('spared');
  });
}
