import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Inbound webhook hooks (spec 2.10): the secret URL's token is the whole credential; only its hash is kept.
  await knex.schema.createTable('webhook_hooks', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('label').notNullable();
    // SHA-256 of the whole `whk_…` token, hex. Regenerating replaces it, so the old URL stops matching.
    t.text('token_hash').notNullable();
    // 'active' | 'disabled'
    t.text('status').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['account_id', 'status']);
  });
  // Only active hooks are in the lookup index: an unknown, disabled or regenerated token is the same
  // index miss, so the three 404s cost the same work.
  await knex.raw("CREATE UNIQUE INDEX webhook_hooks_active_token ON webhook_hooks (token_hash) WHERE status = 'active'");

  // Every delivery to a live hook URL, with its outcome: 'Accepted' | 'Rate Limited' | 'Worker Error'.
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable();
    t.text('hook_id').notNullable().references('webhook_hooks.id').onDelete('CASCADE');
    t.bigInteger('at').notNullable();
    t.text('outcome').notNullable();
    t.integer('bytes').notNullable();
    // The body as received (UTF-8 JSON text), kept for the agent and for replay; null when rate limited.
    t.text('body');
    // Set when this delivery is a replay (`hook replay`) of an earlier one.
    t.text('replay_of');
    // The agent turn the worker recorded for it; null until the webhook-events job has run.
    t.text('turn_id');
    t.text('error');
    t.index(['hook_id', 'at']);
  });
  // The sweeper's question: accepted deliveries the agent never got.
  await knex.raw("CREATE INDEX webhook_deliveries_unhanded ON webhook_deliveries (at) WHERE outcome = 'Accepted' AND turn_id IS NULL");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_hooks');
}
