import type { Queryable } from '../db.js';

export const SLUG_MAX = 80;
/** What a slug looks like: lowercase ascii words joined by '-'. */
export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A title's slug: accents folded, lowercase ascii words joined by '-', at most SLUG_MAX characters on a word. */
export function slugify(title: string): string {
  const words = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let out = '';
  for (const w of words) {
    const next = out ? `${out}-${w}` : w;
    if (next.length > SLUG_MAX) {
      if (!out) out = w.slice(0, SLUG_MAX);
      break;
    }
    out = next;
  }
  return out || 'post';
}

/**
 * The first of `base`, `base-2`, `base-3`… no post of the account has (pending rows count, so two
 * reservations never pick the same one; the unique index settles a race and the caller tries again).
 */
export async function freeSlug(q: Queryable, accountId: string, base: string): Promise<string> {
  // Slugs hold no LIKE wildcards; the prefix also finds the shortened candidates of a long base.
  const prefix = base.slice(0, SLUG_MAX - 8);
  const rows = (await q('posts').where({ account_id: accountId }).andWhere('slug', 'like', `${prefix}%`).pluck('slug')) as string[];
  const taken = new Set(rows);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
