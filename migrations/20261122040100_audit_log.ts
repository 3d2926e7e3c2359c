import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // 'api' (a token's write) or 'admin' (an operator's CLI verb).
    t.text('actor').notNullable();
    t.text('token_id');
    t.text('token_label');
    t.text('method').notNullable();
    t.text('route').notNullable();
    t.text('target_id');
    t.integer('status').notNullable();
    t.bigInteger('at').notNullable();
    t.index(['account_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
}
