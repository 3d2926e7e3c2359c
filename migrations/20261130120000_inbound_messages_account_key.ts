import type { Knex } from 'knex';

/**
 * `inbound_messages` is keyed by account like every other account table (docs/decisions/inbound-smtp.md
 * "Every message is stored under its account"): the listener and the inbound URL know the account before they
 * store a message, so `account_id` is NOT NULL and the primary key is `(account_id, id)`; a plain index on `id`
 * serves the parse job and the sweep, which carry the id alone. The applied-once index already leads with the account.
 *
 * Rows stored before without an account are placed from what they were matched to (their send, their lead), else
 * from the first envelope recipient whose `reply+`/`unsubscribe+`/`bounces+` token names a thread; the rest (mail to
 * the bare bounce address that matched nothing) are deleted: past-use raw bytes no account can see. Down restores
 * the key on `id` and a nullable `account_id`; the deleted rows do not come back.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE inbound_messages m SET account_id = t.account_id FROM mail_threads t
     WHERE m.account_id IS NULL AND m.send_id IS NOT NULL AND t.send_id = m.send_id`);
  await knex.raw(`
    UPDATE inbound_messages m SET account_id = l.account_id FROM leads l
     WHERE m.account_id IS NULL AND m.lead_id IS NOT NULL AND l.id = m.lead_id`);
  await knex.raw(`
    UPDATE inbound_messages m SET account_id = p.account_id FROM (
      SELECT DISTINCT ON (u.id) u.id, t.account_id
        FROM inbound_messages u
        CROSS JOIN LATERAL jsonb_array_elements_text(u.rcpt_to) WITH ORDINALITY AS r(address, n)
        JOIN mail_threads t ON t.reply_token = split_part(split_part(lower(r.address), '@', 1), '+', 2)
       WHERE u.account_id IS NULL AND lower(r.address) ~ '^(reply|unsubscribe|bounces)\\+[^@]+@'
       ORDER BY u.id, r.n) p
     WHERE m.id = p.id AND m.account_id IS NULL`);
  await knex.raw('DELETE FROM inbound_messages WHERE account_id IS NULL');
  await knex.raw('ALTER TABLE inbound_messages ALTER COLUMN account_id SET NOT NULL');
  await knex.raw(
    'ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_pkey, ADD CONSTRAINT inbound_messages_pkey PRIMARY KEY (account_id, id)',
  );
  await knex.raw('CREATE INDEX inbound_messages_id_index ON inbound_messages (id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX inbound_messages_id_index');
  await knex.raw(
    'ALTER TABLE inbound_messages DROP CONSTRAINT inbound_messages_pkey, ADD CONSTRAINT inbound_messages_pkey PRIMARY KEY (id)',
  );
  await knex.raw('ALTER TABLE inbound_messages ALTER COLUMN account_id DROP NOT NULL');
}
