import type { Knex } from 'knex';

/**
 * DKIM signing keys, one row per domain and selector (admin `mail dkim generate`). The private key is
 * kept only sealed (`private_key_sealed`, AES-256-GCM under the service secret `provider-keys`) and is
 * never printed, logged or returned; `public_key` (base64 SPKI, the TXT record's `p=`) may be shown
 * again. Every key of a domain signs its mail (rotation: a new selector beside the old, then remove it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dkim_keys', (t) => {
    t.text('domain').notNullable();
    t.text('selector').notNullable();
    t.text('private_key_sealed').notNullable();
    t.text('public_key').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['domain', 'selector']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dkim_keys');
}
