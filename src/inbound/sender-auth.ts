/**
 * Sender authentication as the receiving provider recorded it: the `Authentication-Results` header
 * (RFC 8601). Anyone can write such a header into a message, so only the topmost one carrying an
 * authserv-id the operator trusts (INBOUND_TRUSTED_AUTHSERV_IDS) is read: the provider adds its own on
 * top of whatever the sender wrote (and should remove forged ones with its id, RFC 8601 §5). Read only
 * for mail that came in on an account's inbound URL: over our own SMTP listener no such field is read.
 */

/** One result: `dkim=pass header.d=acme.test` → method `dkim`, result `pass`, props `{ 'header.d': 'acme.test' }`. */
export interface AuthResult {
  method: string;
  result: string;
  props: Record<string, string>;
}

export interface AuthResultsField {
  authservId: string;
  results: AuthResult[];
}

/** An `Authentication-Results` field of the top header block: its place among all fields, its value. */
export interface RawAuthField {
  position: number;
  value: string;
}

/** What a message's top header block says for sender authentication (parse.ts fills it). */
export interface HeaderAuth {
  /** Authentication-Results fields, top first. */
  fields: RawAuthField[];
  /** How many `From` fields the message has (DMARC, and this check, want exactly one). */
  fromCount: number;
}

/** Bytes of the top header block read for these fields (the provider's are at its very top). */
export const AUTH_HEADER_SCAN = 64 * 1024;
/** Fields and results read at most (a real header has a handful). */
const MAX_FIELDS = 50;
const MAX_RESULTS = 20;

/** The `Authentication-Results` fields and the `From` count of a top header block (unfolded, in order). */
export function headerAuthOf(headerBlock: string): HeaderAuth {
  const unfolded = headerBlock.slice(0, AUTH_HEADER_SCAN).replace(/\r?\n[ \t]/g, ' ');
  const fields: RawAuthField[] = [];
  let fromCount = 0;
  let position = 0;
  for (const line of unfolded.split(/\r?\n/)) {
    const m = /^([!-9;-~]+)[ \t]*:(.*)$/.exec(line);
    if (!m) continue;
    const name = m[1]!.toLowerCase();
    if (name === 'from') fromCount++;
    if (name === 'authentication-results' && fields.length < MAX_FIELDS) fields.push({ position, value: m[2]!.trim() });
    position++;
  }
  return { fields, fromCount };
}

type Tok = { t: 'word' | 'quoted'; v: string } | { t: ';' | '=' };

/** Words, quoted strings, `;` and `=`; comments (nested, with quoted pairs) and white space dropped. Null when unbalanced. */
function tokens(value: string): Tok[] | null {
  const out: Tok[] = [];
  let i = 0;
  while (i < value.length) {
    const c = value[i]!;
    if (c === ' ' || c === '\t') i++;
    else if (c === '(') {
      let depth = 0;
      for (; i < value.length; i++) {
        const d = value[i]!;
        if (d === '\\') i++;
        else if (d === '(') depth++;
        else if (d === ')' && --depth === 0) break;
      }
      if (depth !== 0) return null;
      i++;
    } else if (c === '"') {
      let v = '';
      for (i++; i < value.length && value[i] !== '"'; i++) v += value[i] === '\\' ? value[++i] : value[i];
      if (i >= value.length) return null;
      out.push({ t: 'quoted', v });
      i++;
    } else if (c === ';' || c === '=') {
      out.push({ t: c });
      i++;
    } else if (c === ')') return null;
    else {
      const start = i;
      while (i < value.length && !' \t();="'.includes(value[i]!)) i++;
      out.push({ t: 'word', v: value.slice(start, i) });
    }
  }
  return out;
}

const text = (t: Tok | undefined): string | null => (t && (t.t === 'word' || t.t === 'quoted') ? t.v : null);

/**
 * Parses a field's value strictly (RFC 8601 §2.2): authserv-id, optional version, then `; none` or
 * `; method=result` results, each with `reason=` and `ptype.property=value` properties. Anything else
 * (a missing authserv-id, a result without `=`, an unclosed comment or quote) is null: not believed.
 */
export function parseAuthResults(value: string): AuthResultsField | null {
  const toks = tokens(value);
  if (!toks?.length) return null;
  const authservId = text(toks[0]);
  if (!authservId || toks[1]?.t === '=') return null;
  let i = 1;
  if (toks[i]?.t === 'word' && /^\d+$/.test(text(toks[i])!)) i++;
  const results: AuthResult[] = [];
  while (i < toks.length) {
    if (toks[i]!.t !== ';') return null;
    i++;
    if (i >= toks.length) break; // a trailing `;`
    if (text(toks[i])?.toLowerCase() === 'none' && i + 1 === toks.length && results.length === 0) return { authservId, results };
    const pairs: [string, string][] = [];
    while (i < toks.length && toks[i]!.t !== ';') {
      const key = toks[i]!.t === 'word' ? text(toks[i]) : null;
      const v = text(toks[i + 2]);
      if (!key || toks[i + 1]?.t !== '=' || v === null) return null;
      pairs.push([key.toLowerCase(), v]);
      i += 3;
    }
    const [method, result] = pairs[0] ?? [];
    if (!method || !result || !/^[a-z0-9-]+(\/\d+)?$/.test(method)) return null;
    const props: Record<string, string> = {};
    for (const [k, v] of pairs.slice(1)) props[k] ??= v;
    if (results.length < MAX_RESULTS) results.push({ method: method.split('/')[0]!, result: result.toLowerCase(), props });
  }
  return results.length ? { authservId, results } : null;
}

/**
 * The one field believed: the topmost field with a trusted authserv-id (untrusted fields above it, such
 * as an internal relay's added after the provider, are passed over). Only that field counts: a field of
 * the same authserv-id below it, even right below, may be the sender's (a provider that does not strip
 * forged fields with its own id leaves them there), so a `pass` written below the provider's verdict is
 * never read. Reading stops at the first field that does not parse: a field below it may be the sender's.
 */
export function trustedField(fields: RawAuthField[], trusted: string[]): AuthResultsField | null {
  if (!trusted.length) return null;
  for (const f of fields) {
    const parsed = parseAuthResults(f.value);
    if (!parsed) return null;
    if (trusted.includes(parsed.authservId.toLowerCase())) return parsed;
  }
  return null;
}

/** The domain of an address or `@domain` (lowercased), or null. */
export const domainOf = (address: string | null | undefined): string | null => {
  const at = address?.lastIndexOf('@') ?? -1;
  const d = at >= 0 ? address!.slice(at + 1).toLowerCase() : '';
  return /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(d) ? d : null;
};

/** `domain` is the authenticated domain or below it (DKIM `d=acme.test` covers `mail.acme.test`); a bare TLD covers nothing. */
export const alignsWith = (domain: string | null, authenticated: string): boolean =>
  !!domain && authenticated.includes('.') && (domain === authenticated || domain.endsWith(`.${authenticated}`));

/** What our own check of SMTP-received mail found (src/inbound/smtp-auth.ts): no key, signature or text of the mail. */
export interface OwnChecks {
  dkim: { domain: string; result: string; aligned: boolean }[];
  spf: { domain: string | null; result: string };
  dmarc: { result: string; policy: string | null } | null;
}

/**
 * The verdict kept on the message: which believed check passed for which domain, or why none did; with
 * `checks` when we checked the sender ourselves (mail received over our SMTP listener).
 */
export type SenderAuth = (
  | { pass: true; method: 'dkim' | 'dmarc'; domain: string; authservId: string }
  | { pass: false; reason: string }
) & { checks?: OwnChecks };

/**
 * Whether the provider's believed field shows the `From` domain authenticated: `dmarc=pass` with
 * `header.from` the From domain, or `dkim=pass` with a signing domain (`header.d`, else `header.i`'s)
 * the From domain is at or below. A `dmarc=fail` in that field is final: no `dkim=pass` beside it (nor
 * anything below it) turns it into a pass. Exactly one From field, else nothing passes.
 */
export function senderAuthentication(from: string | null, auth: HeaderAuth, trusted: string[]): SenderAuth {
  if (!trusted.length) return { pass: false, reason: 'no trusted authserv-id is configured' };
  const fromDomain = domainOf(from);
  if (!fromDomain || auth.fromCount !== 1) return { pass: false, reason: 'not exactly one From address' };
  const field = trustedField(auth.fields, trusted);
  if (!field) return { pass: false, reason: 'no Authentication-Results of a trusted authserv-id on top' };
  if (field.results.some((r) => r.method === 'dmarc' && r.result === 'fail'))
    return { pass: false, reason: 'the provider failed DMARC for the message' };
  for (const r of field.results) {
    if (r.result !== 'pass') continue;
    if (r.method === 'dmarc' && r.props['header.from']?.toLowerCase() === fromDomain) {
      return { pass: true, method: 'dmarc', domain: fromDomain, authservId: field.authservId };
    }
    const d = r.method === 'dkim' ? (r.props['header.d']?.toLowerCase() ?? domainOf(r.props['header.i'])) : null;
    if (d && alignsWith(fromDomain, d)) return { pass: true, method: 'dkim', domain: d, authservId: field.authservId };
  }
  return { pass: false, reason: 'no DKIM or DMARC pass for the From domain' };
}
