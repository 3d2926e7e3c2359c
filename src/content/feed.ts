import type { Queryable } from '../db.js';
import { postsRepository, sitemapRows } from './posts.repository.js';
import { postUrl } from './posts.service.js';

/** Posts in the Atom feed: the latest published. */
export const FEED_ENTRIES = 20;
/** A sitemap file holds at most 50,000 URLs (sitemaps.org). */
export const SITEMAP_MAX = 50_000;

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
/** Text or attribute value escaped for XML; characters XML 1.0 cannot carry at all are dropped. */
const esc = (s: string) =>
  s.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The account's Atom feed (RFC 4287) of its latest FEED_ENTRIES published posts, newest first. Each
 * entry's id is a URN of the post's id (stable even when the site's URL changes); its content is the
 * post's sanitised HTML, its link the canonical URL when the account set a blog base URL.
 */
export async function atomFeed(q: Queryable, accountId: string, accountName: string, selfUrl: string): Promise<string> {
  const rows = await postsRepository(q).page(accountId, { tag: null, updatedSince: null, after: null, limit: FEED_ENTRIES });
  const base = rows[0]?.blog_base_url ?? (await postsRepository(q).blogBaseUrl(accountId));
  const updated = rows.reduce((m, r) => Math.max(m, r.updated_at), 0);
  const entries = rows.map((r) => {
    const url = postUrl(r.blog_base_url, r.slug);
    return [
      '  <entry>',
      `    <id>urn:growth-agent:post:${esc(r.id)}</id>`,
      `    <title>${esc(r.title)}</title>`,
      ...(url ? [`    <link rel="alternate" type="text/html" href="${esc(url)}"/>`] : []),
      `    <published>${iso(r.published_at ?? r.updated_at)}</published>`,
      `    <updated>${iso(r.updated_at)}</updated>`,
      ...(r.author ? [`    <author><name>${esc(r.author)}</name></author>`] : []),
      ...r.tags.map((t) => `    <category term="${esc(t)}"/>`),
      `    <summary>${esc(r.excerpt)}</summary>`,
      `    <content type="html">${esc(r.html)}</content>`,
      '  </entry>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>urn:growth-agent:feed:${esc(accountId)}</id>`,
    `  <title>${esc(accountName)}</title>`,
    `  <updated>${iso(updated || 0)}</updated>`,
    // Atom wants an author on the feed or on every entry.
    `  <author><name>${esc(accountName)}</name></author>`,
    `  <link rel="self" type="application/atom+xml" href="${esc(selfUrl)}"/>`,
    ...(base ? [`  <link rel="alternate" type="text/html" href="${esc(base)}"/>`] : []),
    ...entries,
    '</feed>',
    '',
  ].join('\n');
}

/** A sitemap <urlset> of the account's published posts; empty without a blog base URL (posts have no URL). */
export async function sitemap(q: Queryable, accountId: string): Promise<string> {
  const base = await postsRepository(q).blogBaseUrl(accountId);
  const rows = base ? await sitemapRows(q, accountId, SITEMAP_MAX) : [];
  const urls = rows.map((r) => `  <url><loc>${esc(`${base}${r.slug}`)}</loc><lastmod>${iso(r.updated_at)}</lastmod></url>`);
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...urls,
    '</urlset>',
    '',
  ].join('\n');
}
