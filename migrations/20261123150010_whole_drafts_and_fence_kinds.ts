import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // The card keeps its draft whole in `payload` (shipping reads it); `payload_view` is the copy the API
  // shows, with long text cut as spec 8.3 caps it. Null when nothing was cut (the API shows `payload`).
  await knex.schema.alterTable('review_cards', (t) => {
    t.jsonb('payload_view');
  });
  // The fence (still named mail_sends: queued reconcile jobs carry its ids) now holds any kind of work:
  // which adapter ships it, and the adapter's own fields of the work (a reply's In-Reply-To, …).
  await knex.schema.alterTable('mail_sends', (t) => {
    t.text('kind_of_work').notNullable().defaultTo('email');
    t.jsonb('details');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_sends', (t) => {
    t.dropColumn('details');
    t.dropColumn('kind_of_work');
  });
  await knex.schema.alterTable('review_cards', (t) => {
    t.dropColumn('payload_view');
  });
}
