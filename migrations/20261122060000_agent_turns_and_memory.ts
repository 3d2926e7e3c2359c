import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Every input that starts a turn (message, event, workflow run, revision, wake) is one row here.
  await knex.schema.createTable('agent_turns', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // 'message' | 'event' | 'workflow_run' | 'revision' | 'wake'
    t.text('kind').notNullable();
    // 'api' for token messages; other origins (dashboard, hooks, schedules) are not API-readable.
    t.text('origin').notNullable();
    t.text('token_id');
    t.text('client_request_id');
    t.text('text').notNullable().defaultTo('');
    // Outside data for events: { label, content } — handed to the brain as a labelled data block.
    t.jsonb('data');
    // 'interrupt' (default) or 'queue' (waits behind current work, expires after the configured TTL).
    t.text('mode').notNullable().defaultTo('interrupt');
    // 'queued' | 'running' | 'replied' | 'failed'
    t.text('status').notNullable();
    t.text('failure');
    t.boolean('interrupted').notNullable().defaultTo(false);
    t.bigInteger('interrupt_requested_at');
    t.integer('attempts').notNullable().defaultTo(0);
    // Which worker process (host-pid) last claimed the turn: for operators and the one-turn proof.
    t.text('runner');
    t.integer('steps_done').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('not_before').notNullable();
    t.bigInteger('expires_at');
    t.bigInteger('started_at');
    t.bigInteger('finished_at');
    t.index(['account_id', 'status', 'created_at']);
    t.index(['token_id', 'created_at']);
    t.index(['status', 'created_at']);
  });
  await knex.raw(
    'CREATE UNIQUE INDEX agent_turns_client_request_id ON agent_turns (token_id, client_request_id) WHERE client_request_id IS NOT NULL',
  );
  // Reply bubbles, in order.
  await knex.schema.createTable('agent_replies', (t) => {
    t.bigIncrements('id').primary();
    t.text('turn_id').notNullable().references('agent_turns.id').onDelete('CASCADE');
    t.text('account_id').notNullable();
    t.text('text').notNullable();
    t.bigInteger('at').notNullable();
    t.index(['turn_id', 'id']);
  });
  await knex.schema.createTable('agent_memory', (t) => {
    t.bigIncrements('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('text').notNullable();
    t.text('turn_id');
    t.bigInteger('created_at').notNullable();
    t.index(['account_id', 'id']);
  });
  await knex.schema.createTable('agent_state', (t) => {
    t.text('account_id').primary().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('last_activity_at');
    t.bigInteger('last_turn_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agent_state');
  await knex.schema.dropTable('agent_memory');
  await knex.schema.dropTable('agent_replies');
  await knex.schema.dropTable('agent_turns');
}
