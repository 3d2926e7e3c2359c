import type { Knex } from 'knex';

/**
 * Reply tokens (the `reply+<token>@` / `unsubscribe+` / `bounces+` addresses and the one-click `/u/<token>` URL)
 * are looked up by their SHA-256, like API and hook tokens, and new rows keep no plaintext
 * (docs/decisions/secrets.md, "Reply and unsubscribe tokens are kept as hashes").
 *
 * Safe for a rolling deploy: `reply_token` stays (nullable) for processes of the previous version, which still
 * look up by it; every existing row gets its hash here; a trigger fills the hash of any row such a process
 * still writes with a plaintext token, so the new processes find those too. `admin secrets forget-reply-tokens`
 * clears the plaintext once every process runs this version.
 */
const HASH = "encode(sha256(convert_to(reply_token, 'UTF8')), 'hex')";

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE mail_threads ADD COLUMN reply_token_hash text, ALTER COLUMN reply_token DROP NOT NULL');
  await knex.raw(`UPDATE mail_threads SET reply_token_hash = ${HASH} WHERE reply_token IS NOT NULL`);
  await knex.raw(`
    CREATE FUNCTION mail_threads_reply_token_hash() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.reply_token IS NOT NULL THEN
        NEW.reply_token_hash := encode(sha256(convert_to(NEW.reply_token, 'UTF8')), 'hex');
      END IF;
      RETURN NEW;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER mail_threads_reply_token_hash BEFORE INSERT OR UPDATE OF reply_token ON mail_threads
      FOR EACH ROW EXECUTE FUNCTION mail_threads_reply_token_hash()`);
  await knex.raw('ALTER TABLE mail_threads ALTER COLUMN reply_token_hash SET NOT NULL');
  // As every unique key, it leads with the account; the lookup (by the hash alone) has its own index.
  await knex.raw('ALTER TABLE mail_threads ADD CONSTRAINT mail_threads_reply_token_hash_unique UNIQUE (account_id, reply_token_hash)');
  await knex.raw('CREATE INDEX mail_threads_reply_token_hash ON mail_threads (reply_token_hash)');
  // Finds the rows whose plaintext is still kept (none, once forget-reply-tokens has run).
  await knex.raw('CREATE INDEX mail_threads_plain_reply_token ON mail_threads (send_id) WHERE reply_token IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX mail_threads_plain_reply_token');
  await knex.raw('DROP INDEX mail_threads_reply_token_hash');
  await knex.raw('ALTER TABLE mail_threads DROP CONSTRAINT mail_threads_reply_token_hash_unique');
  await knex.raw('DROP TRIGGER mail_threads_reply_token_hash ON mail_threads');
  await knex.raw('DROP FUNCTION mail_threads_reply_token_hash()');
  await knex.raw('ALTER TABLE mail_threads DROP COLUMN reply_token_hash');
}
