import type { Knex } from 'knex';

/**
 * A session keeps where it was started: the client's network (an IPv4 address, an IPv6 /64) and the hash of
 * the browser's device cookie, so a sign-in from a device and network none of the person's recent sessions
 * came from mails the person a sign-in alert (docs/dashboard.md, "Sign-in alerts").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboard_sessions', (t) => {
    t.text('network');
    t.text('device_hash');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('dashboard_sessions', (t) => {
    t.dropColumn('network');
    t.dropColumn('device_hash');
  });
}
