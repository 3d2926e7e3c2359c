import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // One row per executed tool call of a turn, written in the same transaction as the call's effect, so a
  // turn whose worker died resumes after its last committed step (docs/decisions.md, "Agent turns: crash
  // recovery"). The round's first step also keeps the calls the brain proposed for that round.
  await knex.schema.createTable('agent_turn_steps', (t) => {
    t.text('turn_id').notNullable().references('agent_turns.id').onDelete('CASCADE');
    t.integer('round').notNullable();
    t.integer('idx').notNullable();
    // The ToolResult the brain reads back: { id, name, ok, result }.
    t.jsonb('result').notNullable();
    // Only on idx 0: the round's proposed calls and whether the brain said the turn was done.
    t.jsonb('round_calls');
    t.boolean('round_done');
    // The fence: a (round, idx) is executed at most once, whoever runs the turn.
    t.primary(['turn_id', 'round', 'idx']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agent_turn_steps');
}
