import type { Knex } from 'knex';

/**
 * Retention deletes old agent turns, review cards and conversions without taking their counts out of
 * `/results` (docs/decisions/retention.md): the rollup triggers skip a row change made while the transaction
 * setting `growth.retention` is `on`, which only the retention pass sets (SET LOCAL, its own short transactions).
 */
const TRIGGERS: Array<[table: string, fn: string, columns: string]> = [
  ['agent_turns', 'results_harness_delta', 'account_id, status, started_at, finished_at'],
  ['review_cards', 'results_harness_delta', 'account_id, status, resolution, resolved_at, created_at'],
  ['conversions', 'results_value_delta', 'account_id, channel, currency, value, occurred_at, aggregated_at'],
];

async function create(knex: Knex, when: string): Promise<void> {
  for (const [table, fn, columns] of TRIGGERS) {
    await knex.raw(`DROP TRIGGER ${table}_results_rollup ON ${table}`);
    await knex.raw(`CREATE TRIGGER ${table}_results_rollup AFTER INSERT OR DELETE OR UPDATE OF ${columns} ON ${table}
                    FOR EACH ROW ${when} EXECUTE FUNCTION ${fn}()`);
  }
}

export async function up(knex: Knex): Promise<void> {
  await create(knex, `WHEN (current_setting('growth.retention', true) IS DISTINCT FROM 'on')`);
}

export async function down(knex: Knex): Promise<void> {
  await create(knex, '');
}
