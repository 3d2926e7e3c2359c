import type { Knex } from 'knex';

/**
 * The mail loop: what comes back from sent mail.
 * - `mail_threads`: one row per shipped mail (a fence of email or a sequence step), written with the
 *   fence: its Message-ID and the opaque `reply+<token>` / one-click unsubscribe token that find it again.
 * - `inbound_messages`: every message received (SMTP or the inbound URL), raw bytes kept whole, written
 *   before the SMTP server answers 250; what parsing made of it.
 * - `inbound_urls`: the per-account secret URL for providers that forward received mail (hash only).
 * - `mail_sequences`: a sequence card's steps and how far it got.
 * - The fence allows one live row per (card, step): a sequence ships each step under its own key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_threads', (t) => {
    t.text('send_id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('card_id').notNullable();
    t.text('lead_id');
    t.text('sequence_id');
    t.integer('step').notNullable().defaultTo(0);
    // Opaque, random: the local part of Reply-To (reply+<token>@INBOUND_MAIL_DOMAIN) and the one-click URL.
    t.text('reply_token').notNullable().unique();
    // As sent, with the angle brackets: `<...@INBOUND_MAIL_DOMAIN>`.
    t.text('message_id').notNullable().unique();
    // Lowercased bare address.
    t.text('to_address').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['account_id', 'to_address']);
    t.index(['sequence_id']);
  });

  await knex.schema.createTable('inbound_messages', (t) => {
    t.text('id').primary();
    // Known when the message arrived on an account's inbound URL, or once matched; null while unplaced.
    t.text('account_id').references('accounts.id').onDelete('CASCADE');
    t.text('via').notNullable(); // smtp | http
    t.text('mail_from');
    t.jsonb('rcpt_to').notNullable().defaultTo('[]');
    t.binary('raw').notNullable();
    t.integer('size').notNullable();
    t.bigInteger('received_at').notNullable();
    // received → applied | unplaced | malformed | duplicate
    t.text('status').notNullable().defaultTo('received');
    t.text('reason');
    // reply | auto_reply | bounce | unsubscribe | complaint
    t.text('kind');
    t.text('reply_kind');
    t.jsonb('details');
    t.text('send_id');
    t.text('lead_id');
    // The message's own Message-ID header (a provider retrying the same message is applied once).
    t.text('header_message_id');
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('processed_at');
    t.index(['status', 'received_at']);
    t.index(['account_id', 'received_at']);
  });

  // A provider's repeat of a message (same account and Message-ID) is applied once: the second settle as
  // `applied` fails on this index and is kept as `duplicate` instead.
  await knex.raw(
    `CREATE UNIQUE INDEX inbound_messages_applied_once ON inbound_messages (account_id, header_message_id) WHERE status = 'applied'`,
  );

  await knex.schema.createTable('inbound_urls', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().unique().references('accounts.id').onDelete('CASCADE');
    t.text('secret_hash').notNullable().unique();
    t.bigInteger('created_at').notNullable();
  });

  await knex.schema.createTable('mail_sequences', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('card_id').notNullable().unique();
    t.text('lead_id');
    t.text('to_address').notNullable();
    // [{ subject, body, delayMs }]: step 0 ships on approval, each later one delayMs after the one before.
    t.jsonb('steps').notNullable();
    // The next step to ship (steps.length once all shipped).
    t.integer('next_step').notNullable().defaultTo(0);
    t.bigInteger('next_at');
    // waiting (not approved yet) | active | stopped | finished
    t.text('status').notNullable().defaultTo('waiting');
    t.text('stop_reason');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['account_id', 'to_address']);
    t.index(['status', 'next_at']);
  });

  await knex.schema.alterTable('mail_sends', (t) => {
    t.integer('step').notNullable().defaultTo(0);
  });
  await knex.raw('DROP INDEX mail_sends_one_live_per_card');
  await knex.raw(`CREATE UNIQUE INDEX mail_sends_one_live_per_card_step ON mail_sends (card_id, step) WHERE status <> 'not_sent'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX mail_sends_one_live_per_card_step');
  await knex.raw(`CREATE UNIQUE INDEX mail_sends_one_live_per_card ON mail_sends (card_id) WHERE status <> 'not_sent'`);
  await knex.schema.alterTable('mail_sends', (t) => {
    t.dropColumn('step');
  });
  await knex.schema.dropTable('mail_sequences');
  await knex.schema.dropTable('inbound_urls');
  await knex.schema.dropTable('inbound_messages');
  await knex.schema.dropTable('mail_threads');
}
