import { accountColumnSql, accountSettings, joinAccount } from '../accounts/settings.repository.js';
import type { Queryable } from '../db.js';
import type { CursorPosition } from '../cursor.js';

/** pending: reserved by a fence, invisible · published · unpublished (taken down, invisible). */
export type PostStatus = 'pending' | 'published' | 'unpublished';

export interface PostRow {
  id: string;
  account_id: string;
  slug: string;
  status: PostStatus;
  title: string;
  excerpt: string;
  markdown: string;
  html: string;
  tags: string[];
  author: string;
  card_id: string | null;
  published_at: number | null;
  updated_at: number;
  created_at: number;
  seq: number;
}

/** A published post with where the account's site serves posts (null when it set none). */
export type ShownRow = PostRow & { blog_base_url: string | null };

/** One change a publication makes to its post. */
export interface PostChange {
  status: 'published' | 'unpublished';
  title?: string;
  excerpt?: string;
  markdown?: string;
  html?: string;
  tags?: string[];
  author?: string;
  cardId: string;
  publishedAt: number | null;
  at: number;
}

export interface PageFilter {
  tag: string | null;
  updatedSince: number | null;
  after: CursorPosition | null;
  limit: number;
}

const PUBLISHED_BY_SLUG = `select p.*, ${accountColumnSql('blog_base_url', 'p.account_id')} as blog_base_url from posts p
  where p.account_id = ? and p.slug = ? and p.status = 'published'`;

/** The posts table and its publications; every read names the account. */
export function postsRepository(q: Queryable) {
  const shown = () => joinAccount(q('posts as p').select('p.*'), 'p.account_id', ['blog_base_url']).where('p.status', 'published');
  return {
    /** Whether the account has a post past `pending` (one the Content API published: its tracked links bring visits). */
    anyPublished: async (accountId: string): Promise<boolean> =>
      Boolean(await q('posts').where({ account_id: accountId }).whereNot({ status: 'pending' }).first('id')),
    /** Any post of the account with this slug, pending included. */
    bySlug: (accountId: string, slug: string): Promise<PostRow | undefined> => q('posts').where({ account_id: accountId, slug }).first(),

    /** The pending post this card reserved earlier (a fence that did not ship), if any. */
    pendingOfCard: (accountId: string, cardId: string): Promise<PostRow | undefined> =>
      q('posts').where({ account_id: accountId, card_id: cardId, status: 'pending' }).first(),

    insertPending: (r: { id: string; accountId: string; slug: string; cardId: string; at: number }) =>
      q('posts').insert({
        id: r.id,
        account_id: r.accountId,
        slug: r.slug,
        status: 'pending',
        card_id: r.cardId,
        updated_at: r.at,
        created_at: r.at,
      }),

    /** The account's post with this id while it is published (a post taken down is not). */
    publishedById: (accountId: string, id: string): Promise<PostRow | undefined> =>
      q('posts').where({ account_id: accountId, id, status: 'published' }).first(),

    lockById: (accountId: string, id: string): Promise<PostRow | undefined> =>
      q('posts').where({ account_id: accountId, id }).forUpdate().first(),

    update: (accountId: string, id: string, c: PostChange) =>
      q('posts')
        .where({ account_id: accountId, id })
        .update({
          status: c.status,
          card_id: c.cardId,
          published_at: c.publishedAt,
          updated_at: c.at,
          ...(c.title !== undefined ? { title: c.title } : {}),
          ...(c.excerpt !== undefined ? { excerpt: c.excerpt } : {}),
          ...(c.markdown !== undefined ? { markdown: c.markdown } : {}),
          ...(c.html !== undefined ? { html: c.html } : {}),
          ...(c.tags !== undefined ? { tags: c.tags } : {}),
          ...(c.author !== undefined ? { author: c.author } : {}),
        }),

    /** A published post by slug, for the Content API (plain SQL: the hot read a site's server repeats). */
    published: async (accountId: string, slug: string): Promise<ShownRow | undefined> =>
      ((await q.raw(PUBLISHED_BY_SLUG, [accountId, slug])) as { rows: ShownRow[] }).rows[0],

    /** Newest published first, keyset on (published_at, seq). */
    page: (accountId: string, f: PageFilter): Promise<ShownRow[]> => {
      const rows = shown().where('p.account_id', accountId);
      if (f.tag !== null) rows.whereRaw('? = any(p.tags)', [f.tag]);
      if (f.updatedSince !== null) rows.where('p.updated_at', '>=', f.updatedSince);
      if (f.after) rows.whereRaw('(p.published_at, p.seq) < (?, ?)', [f.after.at, f.after.seq]);
      return rows
        .orderBy([
          { column: 'p.published_at', order: 'desc' },
          { column: 'p.seq', order: 'desc' },
        ])
        .limit(f.limit);
    },

    /** Records a publication once per key; false when the key was recorded before. */
    recordPublication: async (r: { key: string; accountId: string; postId: string; op: string; at: number }): Promise<boolean> => {
      const rows = await q('post_publications')
        .insert({ idempotency_key: r.key, account_id: r.accountId, post_id: r.postId, op: r.op, at: r.at })
        .onConflict(['account_id', 'idempotency_key'])
        .ignore()
        .returning('idempotency_key');
      return rows.length > 0;
    },

    publication: (key: string): Promise<{ post_id: string; account_id: string } | undefined> =>
      q('post_publications').where({ idempotency_key: key }).first('post_id', 'account_id'),

    blogBaseUrl: async (accountId: string): Promise<string | null> =>
      (await accountSettings(q).column<string | null>(accountId, 'blog_base_url')) ?? null,

    setBlogBaseUrl: (accountId: string, url: string): Promise<number> => accountSettings(q).set(accountId, { blog_base_url: url }),
  };
}

/** The slug and last change of an account's published posts, newest change first (a sitemap's entries). */
export const sitemapRows = (q: Queryable, accountId: string, limit: number): Promise<{ slug: string; updated_at: number }[]> =>
  q('posts').where({ account_id: accountId, status: 'published' }).orderBy('updated_at', 'desc').limit(limit).select('slug', 'updated_at');
