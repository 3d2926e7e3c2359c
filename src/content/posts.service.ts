import { createHash } from 'node:crypto';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { Queryable } from '../db.js';
import { BadRequest, NotFound } from '../errors.js';
import { announceContentChange, postCache, type CachedPost } from './post-cache.js';
import { postsRepository, type ShownRow } from './posts.repository.js';

/** A published post as the Content API shows it. */
export interface Post {
  slug: string;
  title: string;
  excerpt: string;
  markdown: string;
  html: string;
  tags: string[];
  author: string | null;
  publishedAt: number;
  updatedAt: number;
  url: string | null;
}

/** The post's canonical URL: the account's blog base URL and the slug, or null without a base URL. */
export const postUrl = (base: string | null, slug: string) => (base ? `${base}${slug}` : null);

export function postOf(r: ShownRow): Post {
  return {
    slug: r.slug,
    title: r.title,
    excerpt: r.excerpt,
    markdown: r.markdown,
    html: r.html,
    tags: r.tags,
    author: r.author || null,
    publishedAt: r.published_at ?? r.updated_at,
    updatedAt: r.updated_at,
    url: postUrl(r.blog_base_url, r.slug),
  };
}

export interface ListPostsOptions {
  tag: string | null;
  updatedSince: number | null;
  limit: number;
  cursor: string | null;
  cursorSecret: string;
}

/**
 * One page of an account's published posts, newest published first. Keyset paging on (publishedAt,
 * seq): following `nextCursor` to null sees every post published before the first page exactly once. The
 * cursor is signed with the filters, so it cannot be replayed under others.
 */
export async function listPosts(
  q: Queryable,
  accountId: string,
  o: ListPostsOptions,
): Promise<{ posts: Post[]; nextCursor: string | null }> {
  const filter = JSON.stringify([o.tag, o.updatedSince]);
  const after = o.cursor === null ? null : decodeCursor(o.cursorSecret, 'posts', accountId, filter, o.cursor);
  const rows = await postsRepository(q).page(accountId, { tag: o.tag, updatedSince: o.updatedSince, after, limit: o.limit + 1 });
  const shown = rows.slice(0, o.limit);
  const last = shown[shown.length - 1];
  const nextCursor =
    rows.length > o.limit && last
      ? encodeCursor(o.cursorSecret, 'posts', accountId, filter, { at: last.published_at ?? 0, seq: last.seq })
      : null;
  return { posts: shown.map(postOf), nextCursor };
}

/** A published post of the account by slug; 404 for unknown, unpublished, pending or another account's. */
export async function getPost(q: Queryable, accountId: string, slug: string): Promise<Post> {
  const row = await postsRepository(q).published(accountId, slug);
  if (!row) throw new NotFound();
  return postOf(row);
}

/**
 * `{ post }` as sent, with its ETag: from this process's memory while its listener says nothing changed
 * (src/content/post-cache.ts), else read from Postgres and remembered.
 */
export async function postResponse(q: Queryable, listenUrl: string | null, accountId: string, slug: string): Promise<CachedPost> {
  const cache = postCache(listenUrl);
  const known = cache.get(accountId, slug);
  if (known) return known;
  const ticket = cache.ticket(accountId);
  const json = JSON.stringify({ post: await getPost(q, accountId, slug) });
  const sent = { json, etag: etagOf(json) };
  cache.put(accountId, slug, ticket, sent);
  return sent;
}

/** A strong ETag of exactly these bytes. */
export const etagOf = (bytes: string) => `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;

/**
 * Whether an If-None-Match header matches `etag` (RFC 9110 §13.1.2: `*`, or a list of tags; the weak
 * comparison applies, so `W/"x"` matches `"x"`).
 */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** Sets where an account's site serves its posts: an http(s) URL, ending in '/'. 400 otherwise. */
export async function setBlogBaseUrl(q: Queryable, accountId: string, url: string): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadRequest('url must be an http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BadRequest('url must be an http(s) URL');
  if (parsed.search || parsed.hash) throw new BadRequest('url must not have a query or a fragment');
  const base = parsed.href.endsWith('/') ? parsed.href : `${parsed.href}/`;
  if (!(await postsRepository(q).setBlogBaseUrl(accountId, base))) throw new NotFound();
  // Every post's url changes: processes forget them as this commits.
  await announceContentChange(q, accountId);
  return base;
}
