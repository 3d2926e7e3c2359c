import type { Knex } from 'knex';

/**
 * The operator's monthly spend cap per account (admin `channel spend-cap`): approving a budget
 * change is refused when its increase plus this calendar month's (UTC) increases already applied or in
 * flight would pass `monthly_cap` (minor currency units, in `currency`). Kept apart from the ads
 * connection so reconnecting or disconnecting the ad platform never drops the guard.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ads_spend_caps', (t) => {
    t.text('account_id').primary().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('monthly_cap').notNullable();
    t.text('currency').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await knex.raw('ALTER TABLE ads_spend_caps ADD CONSTRAINT ads_spend_caps_cap CHECK (monthly_cap > 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ads_spend_caps');
}
