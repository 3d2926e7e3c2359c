import { hashReplyToken, type threadsRepository, type Thread } from '../mail/threads.repository.js';
import { headerFields, type ParsedMail } from './parse.js';

/** How a message found its send (kept in the inbound row's details). */
export type MatchedBy =
  | 'reply-address'
  | 'unsubscribe-address'
  | 'bounce-address'
  | 'in-reply-to'
  | 'references'
  | 'original-message-id'
  | 'original-address'
  | 'sender';

export type Match = { ok: true; thread: Thread; matchedBy: MatchedBy } | { ok: false; reason: string };

/**
 * The `reply+`/`unsubscribe+`/`bounces+` addresses among a message's recipients (prefix case-insensitive;
 * tokens folded to lowercase, as made). `bounces+<token>` is the envelope sender each send carries (VERP).
 */
export interface TokenAddress {
  kind: 'reply' | 'unsubscribe' | 'bounce';
  token: string;
}

const ORIGINAL_PARTS = ['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers'] as const;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `reply+<token>@domain`, `unsubscribe+<token>@domain` and `bounces+<token>@domain` in any text (a header value, a report's body). */
function tokenPattern(domain: string): RegExp {
  return new RegExp(`\\b(reply|unsubscribe|bounces)\\+([A-Za-z0-9_-]{1,128})@${escapeRegExp(domain)}\\b`, 'gi');
}

const KIND_OF_PREFIX: Record<string, TokenAddress['kind']> = { reply: 'reply', unsubscribe: 'unsubscribe', bounces: 'bounce' };

export function tokenAddresses(values: string[], domain: string): TokenAddress[] {
  const out: TokenAddress[] = [];
  const re = tokenPattern(domain);
  for (const v of values) {
    for (const m of v.matchAll(re)) {
      out.push({ kind: KIND_OF_PREFIX[m[1]!.toLowerCase()]!, token: m[2]!.toLowerCase() });
    }
  }
  return out;
}

/** Addresses the message was delivered to: the SMTP envelope, To, Cc and Delivered-To. */
export function recipientsOf(mail: ParsedMail, rcptTo: string[]): string[] {
  return [...rcptTo, ...mail.to, ...mail.cc, ...(mail.headers['delivered-to'] ? [mail.headers['delivered-to']] : [])];
}

/** What a report says of the message it is about: the original's Message-IDs and token addresses. */
function originalOf(mail: ParsedMail, domain: string): { ids: string[]; tokens: TokenAddress[] } {
  const ids: string[] = [];
  const values: string[] = [];
  for (const type of ORIGINAL_PARTS) {
    const part = mail.parts[type];
    if (!part) continue;
    const h = headerFields(part);
    ids.push(...(h.get('message-id') ?? []));
    values.push(...(h.get('reply-to') ?? []), ...(h.get('list-unsubscribe') ?? []));
  }
  const dsn = mail.parts['message/delivery-status'];
  if (dsn) ids.push(...(headerFields(dsn).get('x-original-message-id') ?? []));
  // A bounce with no report parts (qmail) or an inline original: the raw body, bounded by the parser.
  for (const m of mail.rawBody.matchAll(/^(?:Message-ID|X-Original-Message-ID):[ \t]*(<[^<>\s]+>)/gim)) ids.push(m[1]!);
  values.push(mail.rawBody);
  const clean = ids.map((i) => /<[^<>\s]+>/.exec(i)?.[0]).filter((i): i is string => !!i);
  return { ids: [...new Set(clean)], tokens: tokenAddresses(values, domain) };
}

/**
 * Which send a message answers, never across accounts. In order: a `reply+`/`unsubscribe+`/`bounces+`
 * recipient (the token is the key; a report to `bounces+` that names a failed recipient other than the
 * send's own is refused: the token speaks for one address only); In-Reply-To, then References; for a
 * report (DSN, ARF, a bounce) the original's Message-ID or token; and only when the message came in on an
 * account's inbound URL, the account's latest mail to the sender (or to a bounce's failed recipient). A
 * match in another account than the one whose URL received the message is refused, never attached. An
 * unknown token with no thread headers is unplaced.
 */
export async function matchMail(
  threads: ThreadLookup,
  ctx: {
    domain: string;
    accountId: string | null;
    tokens: TokenAddress[];
    report: boolean;
    /** A delivery status notification (kind `bounce`): matched under `bounceMatch`'s rules. */
    bounce: boolean;
    bounceRecipient: string | null;
  },
  mail: ParsedMail,
): Promise<Match> {
  const found = await findThread(threads, ctx, mail);
  if (!found.ok) return found;
  if (ctx.accountId && found.thread.accountId !== ctx.accountId) return { ok: false, reason: 'claims a send of another account' };
  return ctx.bounce ? bounceMatch(found, ctx.bounceRecipient) : found;
}

/**
 * A delivery report counts only where reports are sent, and only for the recipient of the send it names:
 * one that came to a reply+ or unsubscribe+ address (a person's address for answers, which anyone the
 * mail was forwarded to knows) bounces nothing, and one naming a failed recipient other than its send's
 * (however it matched: our bounces+ token, our original's Message-ID) bounces nobody.
 */
function bounceMatch(found: Match & { ok: true }, named: string | null): Match {
  if (found.matchedBy === 'reply-address' || found.matchedBy === 'unsubscribe-address')
    return { ok: false, reason: 'a delivery report sent to a reply or unsubscribe address, not a bounce address: bounces nothing' };
  if (named && named.toLowerCase() !== found.thread.to.trim().toLowerCase())
    return { ok: false, reason: 'a delivery report names another recipient than its send' };
  return found;
}

/** Where matching finds threads: the repository, or loaders that batch its lookups (process.service.ts). */
export type ThreadLookup = Pick<ReturnType<typeof threadsRepository>, 'byToken' | 'byTokens' | 'byMessageIds' | 'latestTo'>;

/**
 * Distinct tokens a message is matched by, at most: a message may name thousands of `reply+` addresses,
 * and only ours count, so the first few (envelope recipients first) are looked up, in one query.
 */
export const MAX_MATCH_TOKENS = 5;

/** The first MAX_MATCH_TOKENS distinct tokens in order (a token named both ways counts as `unsubscribe`), unsubscribe+ first. */
export function firstTokens(tokens: TokenAddress[]): TokenAddress[] {
  const kept = new Map<string, TokenAddress['kind']>();
  for (const t of tokens) {
    const had = kept.get(t.token);
    if (had) {
      if (t.kind === 'unsubscribe') kept.set(t.token, 'unsubscribe');
    } else if (kept.size < MAX_MATCH_TOKENS) kept.set(t.token, t.kind);
  }
  const out = [...kept].map(([token, kind]) => ({ kind, token }));
  const rank = (t: TokenAddress) => (t.kind === 'unsubscribe' ? 0 : 1);
  return out.sort((a, b) => rank(a) - rank(b));
}

/** The thread of the first of `tokens` that names one, looked up in one query. */
async function byFirstToken(threads: ThreadLookup, tokens: TokenAddress[]): Promise<{ thread: Thread; kind: TokenAddress['kind'] } | null> {
  if (!tokens.length) return null;
  const found = await threads.byTokens(tokens.map((t) => t.token));
  for (const t of tokens) {
    const thread = found.find((x) => x.tokenHash === hashReplyToken(t.token));
    if (thread) return { thread, kind: t.kind };
  }
  return null;
}

async function findThread(
  threads: ThreadLookup,
  ctx: Parameters<typeof matchMail>[1],
  mail: ParsedMail,
): Promise<Match | { ok: false; reason: string }> {
  // The reply+/unsubscribe+/bounces+ addresses among its recipients (tokenAddresses of recipientsOf), the first few
  // in one query. An unsubscribe+ recipient decides the kind, so it wins over a reply+ one.
  const tokens = firstTokens(ctx.tokens);
  const byToken = await byFirstToken(threads, tokens);
  if (byToken?.kind === 'bounce') {
    // A bounce of one send names that send's recipient; a report naming anyone else changes nothing.
    const named = ctx.report ? ctx.bounceRecipient : null;
    if (named && named.toLowerCase() !== byToken.thread.to.trim().toLowerCase())
      return { ok: false, reason: 'a report to a bounce address names another recipient than its send' };
    return { ok: true, thread: byToken.thread, matchedBy: 'bounce-address' };
  }
  if (byToken)
    return { ok: true, thread: byToken.thread, matchedBy: byToken.kind === 'unsubscribe' ? 'unsubscribe-address' : 'reply-address' };
  const byIds = async (ids: string[]) => (ids.length ? pick(await threads.byMessageIds(ids), ids) : null);
  const inReplyTo = await byIds(mail.inReplyTo);
  if (inReplyTo) return { ok: true, thread: inReplyTo, matchedBy: 'in-reply-to' };
  const references = await byIds([...mail.references].reverse());
  if (references) return { ok: true, thread: references, matchedBy: 'references' };
  if (ctx.report) {
    const original = originalOf(mail, ctx.domain);
    const byId = await byIds(original.ids);
    if (byId) return { ok: true, thread: byId, matchedBy: 'original-message-id' };
    const byOriginal = await byFirstToken(threads, firstTokens(original.tokens));
    if (byOriginal) return { ok: true, thread: byOriginal.thread, matchedBy: 'original-address' };
  }
  if (tokens.length) return { ok: false, reason: 'unknown reply address' };
  if (ctx.accountId) {
    const address = ctx.report ? ctx.bounceRecipient : mail.from;
    const thread = address ? await threads.latestTo(ctx.accountId, address) : null;
    if (thread) return { ok: true, thread, matchedBy: 'sender' };
  }
  return {
    ok: false,
    reason: ctx.accountId ? 'no send matches its addresses or thread headers' : 'no send matches its reply address or thread headers',
  };
}

/** The thread of the first id in `ids` order (In-Reply-To first; References newest first). */
function pick(found: Thread[], ids: string[]): Thread | null {
  for (const id of ids) {
    const t = found.find((x) => x.messageId === id);
    if (t) return t;
  }
  return null;
}
