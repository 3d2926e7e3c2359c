import type { Knex } from 'knex';

/**
 * A provider connection per account and kind: the professional network (`network`) or the
 * ad platform (`ads`), reached over `transport` (`http`: the provider-bridge contract,
 * docs/provider-bridge.md) at `url`. The key is kept only encrypted (`key_sealed`, AES-256-GCM under
 * the service secret `provider-keys`) and is never returned. `poll_cursor` is where the adapter's poll
 * of the provider's events goes on from.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('provider_connections', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('transport').notNullable();
    t.text('url').notNullable();
    t.text('key_sealed').notNullable();
    t.text('poll_cursor');
    t.bigInteger('polled_at');
    t.bigInteger('created_at').notNullable();
    t.primary(['account_id', 'kind']);
    t.index(['kind']);
  });
  await knex.raw("ALTER TABLE provider_connections ADD CONSTRAINT provider_connections_kind CHECK (kind IN ('network', 'ads'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('provider_connections');
}
