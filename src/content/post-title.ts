/**
 * A post read for one reader (`GET /content/posts/{slug}?reader=…`; docs/decisions/content-and-measurement.md, "A
 * reader's post"): while a post-title experiment runs on the post (the handed `readerTitle`,
 * src/experiments/variants/post-title-readers.ts), the reader's variant is the title, its assignment written at its
 * first read, and each tracked link in the html carries the reader's token (`?x=`) so a click through it counts for
 * that reader. Otherwise (no experiment running, its planned sample reached for the reader's variant) the post as
 * everyone sees it, from postResponse, nothing written.
 */
import type { Db } from '../db.js';
import { NotFound } from '../errors.js';
import { LINK_PATH } from '../measurement/links.js';
import { keyedHash } from '../measurement/ua-hash.js';
import type { CachedPost } from './post-cache.js';
import { postsRepository } from './posts.repository.js';
import { etagOf, postOf, postResponse } from './posts.service.js';

/** A site's reader id: 1 to 128 letters, digits, `.`, `_`, `:` or `-` (its own opaque visitor id). */
export const READER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The query parameter a tracked link of a reader's post carries the reader's token in. */
export const READER_LINK_PARAM = 'x';

/** The post's response for this reader, and whether it is the reader's own (then no cache may share or keep it). */
export interface ReaderPost extends CachedPost {
  personal: boolean;
}

/**
 * The reader's title and token while a post-title experiment runs on the post (its assignment written at the first
 * read; `contact` is asked only then), or null: the post as everyone sees it. Handed in by the process
 * (src/experiments/variants/post-title-readers.ts `readerTitle`): content serves posts and knows no experiment.
 */
export type ReaderTitle = (
  db: Db,
  accountId: string,
  postId: string,
  contact: () => Promise<string>,
) => Promise<{ title: string | undefined; token: string } | null>;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The html with `?x=<token>` on every tracked link of ours (`{baseUrl}/l/{code}`). */
export function withReaderToken(html: string, baseUrl: string, token: string): string {
  const link = new RegExp(`(href="${escapeRe(baseUrl)}${LINK_PATH}/[0-9A-Za-z]{12})"`, 'g');
  return html.replace(link, `$1?${READER_LINK_PARAM}=${token}"`);
}

/** `{ post }` as this reader sees it (see the file's comment); 404 as the plain read for a post not published. */
export async function readerPostResponse(
  db: Db,
  o: { listenUrl: string | null; baseUrl: string; readerTitle: ReaderTitle },
  accountId: string,
  slug: string,
  reader: string,
): Promise<ReaderPost> {
  const shared = async () => ({ ...(await postResponse(db, o.listenUrl, accountId, slug)), personal: false });
  const row = await postsRepository(db).published(accountId, slug);
  if (!row) throw new NotFound();
  // The reader id itself is never stored: its keyed hash, per account, is the assignment's contact.
  const contact = async () => `reader:${(await keyedHash(db, `reader\n${accountId}\n${reader}`)).slice(0, 40)}`;
  const mine = await o.readerTitle(db, accountId, row.id, contact);
  if (!mine) return shared();
  const post = postOf(row);
  const json = JSON.stringify({
    post: { ...post, title: mine.title ?? post.title, html: withReaderToken(post.html, o.baseUrl, mine.token) },
  });
  return { json, etag: etagOf(json), personal: true };
}
