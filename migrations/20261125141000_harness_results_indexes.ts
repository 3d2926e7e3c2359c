import type { Knex } from 'knex';

/**
 * `/results` `harness` counts the agent's own work per account over a time window: turns by when they
 * finished, cards by when they were created and when they were resolved, workflow runs by when they
 * finished. One (account_id, time) index per question, so each count reads only the window's rows; the
 * turn and run indexes carry the status too, so those two counts are index-only scans once vacuumed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX agent_turns_account_finished ON agent_turns (account_id, finished_at) INCLUDE (status, started_at) ' +
      'WHERE finished_at IS NOT NULL',
  );
  await knex.raw('CREATE INDEX review_cards_account_created ON review_cards (account_id, created_at)');
  await knex.raw('CREATE INDEX review_cards_account_resolved ON review_cards (account_id, resolved_at) WHERE resolved_at IS NOT NULL');
  await knex.raw(
    'CREATE INDEX workflow_runs_account_finished ON workflow_runs (account_id, finished_at) INCLUDE (status) WHERE finished_at IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS workflow_runs_account_finished');
  await knex.raw('DROP INDEX IF EXISTS review_cards_account_resolved');
  await knex.raw('DROP INDEX IF EXISTS review_cards_account_created');
  await knex.raw('DROP INDEX IF EXISTS agent_turns_account_finished');
}
