import type { Queryable } from '../db.js';
import { randomBase62 } from '../ids.js';

/** The path tracked links are served under: `{BASE_URL}/l/{code}`. */
export const LINK_PATH = '/l';
/** Codes are 12 base62 characters (71 bits): unguessable, short enough for a mail line. */
export const LINK_CODE_LENGTH = 12;
export const LINK_CODE = /^[0-9A-Za-z]{12}$/;
/** Destinations longer than this are left as they are (not tracked). */
export const LINK_URL_MAX = 2_048;

/** Where a tracked link was sent: what a visit through it is counted under and tied to. */
export interface LinkSource {
  accountId: string;
  /** A `/results` channel: `email` for mail, `seo` for a published post. */
  channel: string;
  sourceType: 'send' | 'post';
  /** The send (fence) id or the post id. */
  sourceId: string;
  cardId: string | null;
  leadId: string | null;
}

/**
 * http(s) URLs in plain text. Parentheses may be part of a URL (`…/wiki/Foo_(bar)`); a closing one
 * that has no opening one inside the URL, and punctuation that ends a sentence, are not (see urlPart).
 */
const TEXT_URL = /\bhttps?:\/\/[^\s<>"'[\]{}]+/gi;
const TRAILING = /[.,;:!?*]+$/;
/** `<a … href="…">` with the attribute itself (not `data-href`), double-quoted as sanitize-html writes it. */
const HREF = /(<a\s(?:[^>]*?\s)?href=")(https?:\/\/[^"]+)(")/gi;

/** The URL a plain-text match stands for: without trailing sentence punctuation or an unbalanced `)`. */
function urlPart(match: string): string {
  let url = match;
  for (;;) {
    const before = url;
    url = url.replace(TRAILING, '');
    if (url.endsWith(')') && (url.match(/\)/g)?.length ?? 0) > (url.match(/\(/g)?.length ?? 0)) url = url.slice(0, -1);
    if (url === before) return url;
  }
}

/** True for a URL worth tracking: absolute http(s) with a host, within the length limit. */
function trackable(url: string): boolean {
  if (url.length > LINK_URL_MAX) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/** Ours: the service's own URLs (tracked links, unsubscribe pages) are never wrapped again. */
function ours(baseUrl: string, url: string): boolean {
  const base = baseUrl.toLowerCase();
  const u = url.toLowerCase();
  return u === base || ['/', '?', '#'].some((c) => u.startsWith(base + c));
}

const decodeAttr = (s: string) =>
  s.replace(/&(amp|quot|lt|gt|#39|#x27);/g, (_, e: string) => ({ amp: '&', quot: '"', lt: '<', gt: '>', '#39': "'", '#x27': "'" })[e]!);

/**
 * Records one tracked link per distinct destination of this source (a re-ship of the same source gets
 * the same codes back) and answers destination → code. Our own URLs (`baseUrl`…) are never wrapped.
 */
export async function trackedCodes(q: Queryable, baseUrl: string, source: LinkSource, urls: string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(urls)].filter((u) => trackable(u) && !ours(baseUrl, u));
  if (!wanted.length) return new Map();
  const at = Date.now();
  const rows = wanted.map((url) => ({
    code: randomBase62(LINK_CODE_LENGTH),
    account_id: source.accountId,
    url,
    channel: source.channel,
    source_type: source.sourceType,
    source_id: source.sourceId,
    card_id: source.cardId,
    lead_id: source.leadId,
    created_at: at,
  }));
  // On a repeat the existing row answers with its own code (the no-op update makes RETURNING see it).
  const { rows: out } = (await q.raw(
    `insert into tracked_links (code, account_id, url, channel, source_type, source_id, card_id, lead_id, created_at)
     select * from jsonb_to_recordset(?::jsonb) as r(code text, account_id text, url text, channel text, source_type text,
       source_id text, card_id text, lead_id text, created_at bigint)
     on conflict (account_id, source_type, source_id, url) do update set url = excluded.url
     returning code, url`,
    [JSON.stringify(rows)],
  )) as { rows: { code: string; url: string }[] };
  return new Map(out.map((r) => [r.url, r.code]));
}

const linkUrl = (baseUrl: string, code: string) => `${baseUrl}${LINK_PATH}/${code}`;

/** Plain text (a mail body) with every http(s) URL replaced by its tracked link. */
export async function trackTextLinks(q: Queryable, baseUrl: string, source: LinkSource, text: string): Promise<string> {
  const found = [...text.matchAll(TEXT_URL)].map((m) => urlPart(m[0]));
  const codes = await trackedCodes(q, baseUrl, source, found);
  if (!codes.size) return text;
  return text.replace(TEXT_URL, (m) => {
    const url = urlPart(m);
    const code = codes.get(url);
    return code ? linkUrl(baseUrl, code) + m.slice(url.length) : m;
  });
}

/** Sanitised HTML (double-quoted attributes, as sanitize-html writes them) with each `<a href>` to http(s) tracked. */
export async function trackHtmlLinks(q: Queryable, baseUrl: string, source: LinkSource, html: string): Promise<string> {
  const found = [...html.matchAll(HREF)].map((m) => decodeAttr(m[2]!));
  const codes = await trackedCodes(q, baseUrl, source, found);
  if (!codes.size) return html;
  return html.replace(HREF, (m, open: string, href: string, close: string) => {
    const code = codes.get(decodeAttr(href));
    return code ? `${open}${linkUrl(baseUrl, code)}${close}` : m;
  });
}
