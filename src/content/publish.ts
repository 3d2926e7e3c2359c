import type { Queryable, Trx } from '../db.js';
import { Rejected } from '../errors.js';
import { newId } from '../ids.js';
import { trackHtmlLinks } from '../measurement/links.js';
import { announceContentChange } from './post-cache.js';
import { postsRepository } from './posts.repository.js';
import { excerptOf, renderMarkdown } from './render.js';
import { freeSlug, slugify } from './slug.js';

/** What a shipped publication does: a post's first publish, a later revision, or taking it down. */
export type PublicationOp = 'publish' | 'update' | 'unpublish';

export const TAGS_MAX = 20;
export const TAG_MAX = 60;
export const AUTHOR_MAX = 120;

/** A card's tags: strings, trimmed, non-empty, at most TAG_MAX characters, distinct, at most TAGS_MAX. */
export function cleanTags(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const tags = value.filter((t): t is string => typeof t === 'string').map((t) => t.trim().slice(0, TAG_MAX).trim());
  return [...new Set(tags.filter(Boolean))].slice(0, TAGS_MAX);
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/** Where a fence's publication lands: the post, its slug, and what the publication does to it. */
export interface Reserved {
  postId: string;
  slug: string;
  op: PublicationOp;
}

/**
 * Runs in the fence's transaction. A card naming the slug of an existing post (published or taken down)
 * updates it, or unpublishes it with `unpublish`; unpublishing a post that does not exist is 409 and
 * nothing is written. Otherwise the card's post is reserved (pending, invisible) under a slug free on the
 * account, from `slug` when the card asks for one, else from the title; a card approved again after a
 * shipment that did not go out reuses its own reservation, so its slug stays what it was.
 */
export async function reservePost(
  trx: Queryable,
  r: { accountId: string; cardId: string; title: string; slug: string | null; unpublish: boolean; hasBody: boolean; at: number },
): Promise<Reserved> {
  const repo = postsRepository(trx);
  const named = r.slug ? await repo.bySlug(r.accountId, r.slug) : undefined;
  if (named && named.status !== 'pending') return { postId: named.id, slug: named.slug, op: r.unpublish ? 'unpublish' : 'update' };
  if (r.unpublish) throw new Rejected(`there is no post with the slug "${r.slug ?? ''}" to unpublish; nothing was changed`);
  if (!r.hasBody) throw new Rejected('this post has no body; nothing was published: request changes so the agent writes it');
  const mine = await repo.pendingOfCard(r.accountId, r.cardId);
  if (mine) return { postId: mine.id, slug: mine.slug, op: 'publish' };
  const base = slugify(r.slug || r.title);
  const id = newId('post');
  // Two reservations racing for one slug: the unique index stops the second, which takes the next free one.
  for (let attempt = 0; ; attempt++) {
    const slug = await freeSlug(trx, r.accountId, base);
    try {
      await trx.transaction((sp) => postsRepository(sp).insertPending({ id, accountId: r.accountId, slug, cardId: r.cardId, at: r.at }));
      return { postId: id, slug, op: 'publish' };
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= 5) throw err;
    }
  }
}

/** The content of a publication (the card's draft as its fence keeps it). */
export interface Publication {
  key: string;
  accountId: string;
  cardId: string;
  postId: string;
  op: PublicationOp;
  title: string;
  markdown: string;
  excerpt: string | null;
  /** Null: a new post has none, an update keeps the post's. */
  tags: string[] | null;
  author: string | null;
}

/**
 * Applies one publication in the caller's transaction, once per idempotency key: a key seen before
 * changes nothing (`applied` false). Publishing renders the markdown to sanitised HTML whose links are
 * tracked links (channel `seo`); `publishedAt` is the first publish's time, kept by every later update.
 */
export async function applyPublication(trx: Trx, baseUrl: string, p: Publication): Promise<{ postId: string; applied: boolean }> {
  const repo = postsRepository(trx);
  const post = await repo.lockById(p.accountId, p.postId);
  if (!post) throw new Error(`post ${p.postId} is gone`);
  const at = Date.now();
  if (!(await repo.recordPublication({ key: p.key, accountId: p.accountId, postId: post.id, op: p.op, at }))) {
    return { postId: post.id, applied: false };
  }
  // Every process forgets the account's posts as this commits (src/content/post-cache.ts).
  await announceContentChange(trx, p.accountId);
  if (p.op === 'unpublish') {
    await repo.update(p.accountId, post.id, { status: 'unpublished', cardId: p.cardId, publishedAt: post.published_at, at });
    return { postId: post.id, applied: true };
  }
  // An update that carries no body keeps the post's (a revision of its title, tags or excerpt only), as it
  // keeps its tags and author when the card names none.
  const markdown = p.markdown.trim() || p.op !== 'update' ? p.markdown : post.markdown;
  const source = { accountId: p.accountId, channel: 'seo', sourceType: 'post' as const, sourceId: post.id, cardId: p.cardId, leadId: null };
  const html = await trackHtmlLinks(trx, baseUrl, source, renderMarkdown(markdown));
  await repo.update(p.accountId, post.id, {
    status: 'published',
    title: p.title,
    excerpt: p.excerpt?.trim() || excerptOf(markdown),
    markdown,
    html,
    tags: p.tags ?? (p.op === 'update' ? post.tags : []),
    author: p.author ?? (p.op === 'update' ? post.author : ''),
    cardId: p.cardId,
    publishedAt: post.published_at ?? at,
    at,
  });
  return { postId: post.id, applied: true };
}

/** The post a publication key published, or null when no publication has that key. */
export async function publicationOf(q: Queryable, key: string): Promise<string | null> {
  return (await postsRepository(q).publication(key))?.post_id ?? null;
}
