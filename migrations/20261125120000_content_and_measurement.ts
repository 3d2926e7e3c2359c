import type { Knex } from 'knex';

/**
 * Content API and Measurement.
 * - `posts`: an account's blog posts, published by approved `blog_post` cards through the shipping path.
 *   A row is reserved (`status` 'pending', invisible) in the fence's transaction, so its slug is unique
 *   per account before anything ships; publishing makes it 'published', unpublishing 'unpublished'.
 * - `post_publications`: one row per shipped change of a post, keyed by the fence's idempotency key:
 *   the Content API's own "provider" record, so a re-ship under the same key changes nothing and
 *   `lookup(key)` can say whether it went out.
 * - `tracked_links`: `{BASE_URL}/l/{code}` → destination, with where the link was sent (channel, the
 *   send/post and card it came from, the lead when known). One code per (source, destination).
 * - `visits`: a landing, through a tracked link or reported by the customer's server. No raw IP; the user
 *   agent only as a keyed hash. `bot` marks link scanners and crawlers, counted apart.
 * - `conversions`: server-side conversion events, unique per (account, event_id); `channel` is filled by
 *   aggregation (last touch: the visit's channel) and `aggregated_at` says it was counted.
 * - `accounts.blog_base_url`: where the account's site serves its posts (a post's canonical URL is it + slug).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => {
    t.text('blog_base_url');
  });

  await knex.schema.createTable('posts', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('slug').notNullable();
    // pending (reserved by a fence, invisible) | published | unpublished
    t.text('status').notNullable();
    t.text('title').notNullable().defaultTo('');
    t.text('excerpt').notNullable().defaultTo('');
    t.text('markdown').notNullable().defaultTo('');
    // Sanitised HTML rendered from the markdown, links rewritten to tracked links.
    t.text('html').notNullable().defaultTo('');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    t.text('author').notNullable().defaultTo('');
    // The card that reserved or last changed it.
    t.text('card_id');
    t.bigInteger('published_at');
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['account_id', 'slug']);
    t.index(['account_id', 'status', 'published_at', 'id']);
    t.index(['account_id', 'card_id']);
  });

  await knex.schema.createTable('post_publications', (t) => {
    t.text('idempotency_key').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('post_id').notNullable();
    // publish | update | unpublish
    t.text('op').notNullable();
    t.bigInteger('at').notNullable();
  });

  await knex.schema.createTable('tracked_links', (t) => {
    t.text('code').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('channel').notNullable();
    // send | post
    t.text('source_type').notNullable();
    t.text('source_id').notNullable();
    t.text('card_id');
    t.text('lead_id');
    t.bigInteger('created_at').notNullable();
    t.unique(['account_id', 'source_type', 'source_id', 'url']);
  });

  await knex.schema.createTable('visits', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('channel').notNullable();
    // link | reported
    t.text('via').notNullable();
    t.text('link_code');
    t.text('source_type');
    t.text('source_id');
    t.text('card_id');
    t.text('lead_id');
    t.text('url');
    t.text('referrer');
    t.jsonb('utm');
    t.text('ua_hash');
    t.boolean('bot').notNullable().defaultTo(false);
    t.bigInteger('at').notNullable();
    t.index(['account_id', 'at']);
  });

  await knex.schema.createTable('conversions', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('event_id').notNullable();
    t.text('name').notNullable();
    t.text('visit_id');
    t.decimal('value', 18, 4);
    t.text('currency');
    t.jsonb('properties');
    t.bigInteger('occurred_at').notNullable();
    t.bigInteger('received_at').notNullable();
    // Set by aggregation: the visit's channel (last touch), or 'direct' without one.
    t.text('channel');
    t.bigInteger('aggregated_at');
    t.primary(['account_id', 'event_id']);
    t.index(['account_id', 'occurred_at']);
  });
  await knex.raw('CREATE INDEX conversions_unaggregated ON conversions (account_id, received_at) WHERE aggregated_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('conversions');
  await knex.schema.dropTable('visits');
  await knex.schema.dropTable('tracked_links');
  await knex.schema.dropTable('post_publications');
  await knex.schema.dropTable('posts');
  await knex.schema.alterTable('accounts', (t) => {
    t.dropColumn('blog_base_url');
  });
}
