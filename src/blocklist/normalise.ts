import { domainToASCII } from 'node:url';

export type BlockKind = 'domain' | 'email' | 'network';

/** Hosts of the professional network whose `/in/<slug>` URLs are profile URLs (spec 2.9). */
export const NETWORK_HOST = 'linkedin.com';
const NETWORK_HOST_RE = /^(?:[a-z]{2,3}\.)?linkedin\.com$/;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;
const SLUG = /^[\p{L}\p{N}][\p{L}\p{N}_-]{0,99}$/u;

/** A bare domain in canonical form (lowercase, punycode, no `www.`, no trailing dot), or null. */
export function normaliseDomain(input: string): string | null {
  let host = input.trim().toLowerCase().replace(/\.+$/, '');
  if (host.startsWith('www.')) host = host.slice(4);
  if (!host || host.length > 253 || /[\s/@:?#]/.test(host)) return null;
  const ascii = domainToASCII(host);
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !TLD.test(labels.at(-1)!)) return null;
  return ascii;
}

function normaliseEmail(input: string): string | null {
  const at = input.lastIndexOf('@');
  if (at <= 0) return null;
  const local = input.slice(0, at);
  const domain = normaliseDomain(input.slice(at + 1));
  if (!domain || !LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  return `${local}@${domain}`;
}

function normaliseUrl(input: string): { kind: BlockKind; value: string } | null {
  let url: URL;
  try {
    url = new URL(/^https?:\/\//.test(input) ? input : `https://${input}`);
  } catch {
    return null;
  }
  if (url.username || url.password || (url.port && url.port !== '80' && url.port !== '443')) return null;
  const host = url.hostname.replace(/\.+$/, '').replace(/^(www|m)\./, '');
  if (NETWORK_HOST_RE.test(host)) {
    const match = /^\/in\/([^/]+)\/?/.exec(url.pathname);
    if (!match) return null;
    let slug: string;
    try {
      slug = decodeURIComponent(match[1]!).toLowerCase();
    } catch {
      return null;
    }
    if (!SLUG.test(slug)) return null;
    return { kind: 'network', value: `https://www.${NETWORK_HOST}/in/${slug}` };
  }
  const domain = normaliseDomain(host);
  return domain ? { kind: 'domain', value: domain } : null;
}

/**
 * Reads one block list value the way a person would mean it: case, surrounding space, trailing dots,
 * `mailto:`, `@domain`, `www.`, and the many spellings of a profile URL all fold to one canonical value.
 * A website URL of any other host is read as its domain. Null when it is none of domain, email or profile.
 */
export function normaliseBlockValue(raw: string): { kind: BlockKind; value: string } | null {
  let s = raw.trim();
  if (!s || s.length > 4096) return null;
  if (/^mailto:/i.test(s)) s = s.slice(7).split('?')[0]!.trim();
  s = s.toLowerCase();
  if (/^https?:\/\//.test(s) || s.includes('/')) return normaliseUrl(s);
  if (s.startsWith('@')) s = s.slice(1);
  if (s.includes('@')) {
    const email = normaliseEmail(s.replace(/\.+$/, ''));
    return email ? { kind: 'email', value: email } : null;
  }
  const domain = normaliseDomain(s);
  return domain ? { kind: 'domain', value: domain } : null;
}

/** The domain and each parent down to two labels: `a.b.example.com` → itself, `b.example.com`, `example.com`. */
export function domainAndParents(domain: string): string[] {
  const labels = domain.split('.');
  const out: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) out.push(labels.slice(i).join('.'));
  return out;
}
