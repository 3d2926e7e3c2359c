import type { Knex } from 'knex';

/**
 * A blog post's title as an experiment's variant (docs/decisions/experiments.md, "What can vary: a blog post's title"):
 * a reader of the post is an assignment row (its `contact` a keyed hash of the site's reader id, never the id), with the
 * random token its tracked links carry (`?x=`), and its first click through one of them: when, and the visit (a
 * conversion is attributed to that visit). Every key leads with account_id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('experiment_assignments', (t) => {
    t.text('token');
    t.bigInteger('clicked_at');
    t.text('click_visit_id');
  });
  await knex.raw('CREATE UNIQUE INDEX experiment_assignments_token ON experiment_assignments (account_id, token) WHERE token IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX experiment_assignments_token');
  await knex.schema.alterTable('experiment_assignments', (t) => {
    t.dropColumn('token');
    t.dropColumn('clicked_at');
    t.dropColumn('click_visit_id');
  });
}
