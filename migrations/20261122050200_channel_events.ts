import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('channel_events', (t) => {
    t.bigIncrements('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('channel').notNullable();
    t.text('type').notNullable();
    // When it happened (epoch ms), not when it was recorded.
    t.bigInteger('at').notNullable();
    // 'person' | 'trust_ladder' | 'setting' for shipped work; null otherwise.
    t.text('decided_by');
    t.double('amount');
    // The thing that caused it (card, send, post id); with it, recording twice is harmless.
    t.text('ref_id');
    t.bigInteger('recorded_at').notNullable();
    t.index(['account_id', 'at']);
  });
  await knex.raw(
    'CREATE UNIQUE INDEX channel_events_ref_unique ON channel_events (account_id, channel, type, ref_id) WHERE ref_id IS NOT NULL',
  );
  await knex.schema.createTable('channel_connections', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('channel').notNullable();
    t.bigInteger('connected_at').notNullable();
    t.primary(['account_id', 'channel']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('channel_connections');
  await knex.schema.dropTable('channel_events');
}
