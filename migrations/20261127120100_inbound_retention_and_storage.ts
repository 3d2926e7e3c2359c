import type { Knex } from 'knex';

/**
 * Received mail stops growing without bound:
 * - `inbound_messages.raw` may be null: the maintenance sweep drops the raw bytes of a settled message after
 *   its retention window (the row, its envelope and what parsing made of it stay; `size` keeps the size it had).
 * - `inbound_messages_raw_kept`: the rows still holding bytes, by status and arrival, so each sweep reads only
 *   what it may drop.
 * - `inbound_account_bytes`: raw bytes each account keeps, maintained by a trigger on every insert, delete and
 *   change of `account_id` or `raw`, so the SMTP listener reads an account's usage with the token it looks up
 *   (one indexed row) instead of summing its messages.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE inbound_messages ALTER COLUMN raw DROP NOT NULL');
  await knex.raw('CREATE INDEX inbound_messages_raw_kept ON inbound_messages (status, received_at) WHERE raw IS NOT NULL');
  await knex.schema.createTable('inbound_account_bytes', (t) => {
    t.text('account_id').primary().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('bytes').notNullable().defaultTo(0);
  });
  await knex.raw(`
    CREATE FUNCTION inbound_account_bytes_track() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      old_account text;
      old_bytes bigint := 0;
      new_account text;
      new_bytes bigint := 0;
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        old_account := OLD.account_id;
        IF OLD.raw IS NOT NULL THEN old_bytes := OLD.size; END IF;
      END IF;
      IF TG_OP <> 'DELETE' THEN
        new_account := NEW.account_id;
        IF NEW.raw IS NOT NULL THEN new_bytes := NEW.size; END IF;
      END IF;
      IF old_account IS NOT DISTINCT FROM new_account AND old_bytes = new_bytes THEN RETURN NULL; END IF;
      IF old_account IS NOT NULL AND old_bytes > 0 THEN
        UPDATE inbound_account_bytes SET bytes = bytes - old_bytes WHERE account_id = old_account;
      END IF;
      IF new_account IS NOT NULL AND new_bytes > 0 THEN
        INSERT INTO inbound_account_bytes AS b (account_id, bytes) VALUES (new_account, new_bytes)
        ON CONFLICT (account_id) DO UPDATE SET bytes = b.bytes + EXCLUDED.bytes;
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER inbound_account_bytes_track AFTER INSERT OR DELETE OR UPDATE OF account_id, raw ON inbound_messages
    FOR EACH ROW EXECUTE FUNCTION inbound_account_bytes_track()`);
  await knex.raw(`
    INSERT INTO inbound_account_bytes (account_id, bytes)
    SELECT account_id, sum(size) FROM inbound_messages WHERE account_id IS NOT NULL AND raw IS NOT NULL GROUP BY account_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER inbound_account_bytes_track ON inbound_messages');
  await knex.raw('DROP FUNCTION inbound_account_bytes_track()');
  await knex.schema.dropTable('inbound_account_bytes');
  await knex.raw('DROP INDEX inbound_messages_raw_kept');
  await knex.raw(`UPDATE inbound_messages SET raw = '\\x'::bytea WHERE raw IS NULL`);
  await knex.raw('ALTER TABLE inbound_messages ALTER COLUMN raw SET NOT NULL');
}
