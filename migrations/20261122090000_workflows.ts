import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Schedules are read in the account's time zone.
  await knex.schema.alterTable('accounts', (t) => {
    t.text('time_zone').notNullable().defaultTo('UTC');
  });
  // Where a run's summary can be delivered: the account's connected destinations.
  await knex.schema.createTable('destinations', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['account_id', 'name']);
  });
  await knex.schema.createTable('workflows', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description');
    t.text('status').notNullable(); // live | paused
    t.text('schedule_text').notNullable();
    t.text('schedule_echo');
    t.text('schedule_error');
    // What BullMQ's job scheduler is given: { pattern?, every?, startDate?, tz }.
    t.jsonb('schedule');
    t.bigInteger('next_run_at');
    t.text('deliver_to');
    t.integer('version').notNullable();
    // [{ id, title, details, gate }]: replaced whole on PATCH; ids carry run history across versions.
    t.jsonb('steps').notNullable();
    t.boolean('proposed_by_agent').notNullable().defaultTo(false);
    t.bigInteger('accepted_at');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('deleted_at');
    t.index(['account_id', 'created_at']);
  });
  await knex.schema.createTable('workflow_runs', (t) => {
    t.text('id').primary();
    t.text('workflow_id').notNullable().references('workflows.id').onDelete('CASCADE');
    t.text('account_id').notNullable();
    // The BullMQ job that fired the run: a second delivery of the same job finds this row.
    t.text('job_id').notNullable().unique();
    t.text('status').notNullable(); // running | waiting | done | failed | cancelled
    // Bumped by every save: saves are conditional on it, so two runners never both advance a step.
    t.integer('revision').notNullable().defaultTo(0);
    t.integer('workflow_version').notNullable();
    t.bigInteger('scheduled_for').notNullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('finished_at');
    // [{ stepId, title, outcome, reason?, turnId?, cardId?, at? }] in step order.
    t.jsonb('steps').notNullable();
    t.text('summary');
    t.text('delivered_to');
    t.index(['workflow_id', 'started_at']);
  });
  // What a run delivered to a built-in destination, readable with the admin CLI.
  await knex.schema.createTable('destination_deliveries', (t) => {
    t.bigIncrements('id').primary();
    t.text('destination_id').notNullable().references('destinations.id').onDelete('CASCADE');
    t.text('run_id').notNullable().unique();
    t.text('text').notNullable();
    t.bigInteger('at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('destination_deliveries');
  await knex.schema.dropTable('workflow_runs');
  await knex.schema.dropTable('workflows');
  await knex.schema.dropTable('destinations');
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('time_zone'));
}
