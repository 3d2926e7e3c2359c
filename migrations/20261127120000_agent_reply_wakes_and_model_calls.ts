import type { Knex } from 'knex';

/**
 * What a reply may cost the agent. `agent_reply_wakes`: one row per wake turn a mail or network reply
 * started, with the thread and lead it belongs to, when it is due (`due_at`, the turn's `not_before`) and
 * how many replies it stands for (later replies on the thread fold into it while it or its card waits).
 * `agent_model_calls`: language-model calls per account and UTC day, against the daily budget.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agent_reply_wakes', (t) => {
    t.text('turn_id').primary().references('agent_turns.id').onDelete('CASCADE').onUpdate('CASCADE');
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // `mail:<Message-ID answered>` or `network:<profile URL>`.
    t.text('thread_key').notNullable();
    // `lead:<id>`, or `from:<address>` when the reply names no lead.
    t.text('lead_key').notNullable();
    // Who replied (an address or a profile URL), for the waiting card's note.
    t.text('counterpart').notNullable();
    t.integer('replies').notNullable().defaultTo(1);
    t.bigInteger('due_at').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_reply_at').notNullable();
    t.index(['account_id', 'thread_key', 'created_at']);
    t.index(['account_id', 'due_at']);
    t.index(['account_id', 'lead_key', 'due_at']);
  });
  await knex.schema.createTable('agent_model_calls', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // UTC day, YYYY-MM-DD.
    t.text('day').notNullable();
    t.integer('calls').notNullable().defaultTo(0);
    // Model calls refused because the budget was spent, and when the first was.
    t.integer('refused').notNullable().defaultTo(0);
    t.bigInteger('exhausted_at');
    t.primary(['account_id', 'day']);
  });
  // The cards a turn made (is a reply's follow-up card still waiting?), one index lookup.
  await knex.raw('CREATE INDEX review_cards_account_turn ON review_cards (account_id, turn_id) WHERE turn_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX review_cards_account_turn');
  await knex.schema.dropTable('agent_model_calls');
  await knex.schema.dropTable('agent_reply_wakes');
}
