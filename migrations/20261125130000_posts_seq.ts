import type { Knex } from 'knex';

/**
 * `posts.seq`: an insertion sequence, so the Content API pages newest published first on
 * (published_at, seq) with the same signed keyset cursor as /leads (src/cursor.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('posts', (t) => {
    t.bigIncrements('seq', { primaryKey: false });
    t.index(['account_id', 'status', 'published_at', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('posts', (t) => {
    t.dropIndex(['account_id', 'status', 'published_at', 'seq']);
    t.dropColumn('seq');
  });
}
