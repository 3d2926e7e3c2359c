import { decodeCursor, encodeCursor } from '../cursor.js';
import type { Queryable } from '../db.js';
import { BadRequest } from '../errors.js';
import { leadsRepository, type LeadRow } from './leads.repository.js';
import { leadListItems } from './leads.service.js';
import { LEAD_STATUSES, type LeadListItem } from './leads.types.js';

/**
 * The dashboard's search over all of an account's leads (docs/dashboard.md, "Leads"): `q` anywhere in a lead's
 * domain or company name, or in the address or name of one of its contacts, case ignored; newest created first,
 * keyset paged on (created_at, seq) like `GET /api/v1/leads`.
 *
 * Two plans, because no single index serves both a common and a rare `q` (docs/dashboard.md, "Search: the plan"):
 * 1. the walk: the account's newest `SEARCH_WALK_ROWS` leads past the cursor through the (account, created_at, seq)
 *    index, each tested against `q` (its contacts through the lead's own index). A `q` on more than one lead in
 *    forty fills the page here, in a few milliseconds, whatever the account's size;
 * 2. otherwise, the trigram indexes (migration `20261221090000_lead_search_and_timeline`) find every matching lead
 *    and contact of the account, and the newest page of those is read: work in proportion to the matches, which
 *    the walk proved are rare.
 */

/** Leads the walk tests before it hands over to the trigram indexes. */
export const SEARCH_WALK_ROWS = 2_000;
/** Trigram indexes need three characters of `q` to narrow anything. */
export const SEARCH_MIN_CHARS = 3;
export const SEARCH_MAX_CHARS = 200;

/** The searched texts: the same expressions as the trigram indexes of the migration, so the indexes serve them. */
const LEAD_TEXT = `(l.domain || ' ' || lower(coalesce(l.company_name, '')))`;
const CONTACT_TEXT = `lower(coalesce(c.email, '') || ' ' || coalesce(c.name, ''))`;

/** `q` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally. */
export function containsPattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

export interface SearchLeadsOptions {
  q: string;
  status: string | null;
  limit: number;
  cursor: string | null;
  cursorSecret: string;
  /** Byte budget of the serialised `leads` array; a page always holds at least one lead. */
  maxBytes: number;
}

/** The search's own checks: each names the field, as the route's schema does (this is the one service behind it). */
function checkOptions(o: SearchLeadsOptions): string {
  const q = o.q.trim();
  if ([...q].length < SEARCH_MIN_CHARS) throw new BadRequest(`q must be at least ${SEARCH_MIN_CHARS} characters`);
  if ([...q].length > SEARCH_MAX_CHARS) throw new BadRequest(`q must be at most ${SEARCH_MAX_CHARS} characters`);
  if (o.status !== null && !(LEAD_STATUSES as readonly string[]).includes(o.status))
    throw new BadRequest(`status must be one of ${LEAD_STATUSES.join(', ')}`);
  if (!Number.isInteger(o.limit) || o.limit < 1 || o.limit > 100) throw new BadRequest('limit must be an integer from 1 to 100');
  return q;
}

type Position = { at: number; seq: number } | null;

/** Plan 1: the matches among the newest `SEARCH_WALK_ROWS` leads past `after`, the newest `take` of them. */
async function walk(q: Queryable, accountId: string, pattern: string, status: string | null, after: Position, take: number) {
  const bindings: unknown[] = [accountId];
  let where = 'account_id = ?';
  if (status !== null) {
    where += ' AND status = ?';
    bindings.push(status);
  }
  if (after) {
    where += ' AND (created_at, seq) < (?, ?)';
    bindings.push(after.at, after.seq);
  }
  const { rows } = await q.raw<{ rows: LeadRow[] }>(
    `SELECT l.* FROM (
       SELECT * FROM leads WHERE ${where} ORDER BY created_at DESC, seq DESC LIMIT ?
     ) l
     LEFT JOIN LATERAL (
       SELECT true AS hit FROM lead_contacts c WHERE c.lead_id = l.id AND ${CONTACT_TEXT} LIKE ? LIMIT 1
     ) ch ON true
     WHERE ${LEAD_TEXT} LIKE ? OR ch.hit
     ORDER BY l.created_at DESC, l.seq DESC LIMIT ?`,
    [...bindings, SEARCH_WALK_ROWS, pattern, pattern, take] as never[],
  );
  return rows;
}

/** Plan 2: every match of the account through the trigram indexes, the newest `take` past `after`. */
async function indexed(q: Queryable, accountId: string, pattern: string, status: string | null, after: Position, take: number) {
  const bindings: unknown[] = [accountId, pattern, accountId, pattern, accountId];
  let where = '';
  if (status !== null) {
    where += ' AND l.status = ?';
    bindings.push(status);
  }
  if (after) {
    where += ' AND (l.created_at, l.seq) < (?, ?)';
    bindings.push(after.at, after.seq);
  }
  const { rows } = await q.raw<{ rows: LeadRow[] }>(
    `WITH hits AS MATERIALIZED (
       SELECT l.id FROM leads l WHERE l.account_id = ? AND ${LEAD_TEXT} LIKE ?
       UNION
       SELECT c.lead_id FROM lead_contacts c WHERE c.account_id = ? AND ${CONTACT_TEXT} LIKE ?
     )
     SELECT l.* FROM hits JOIN leads l ON l.account_id = ? AND l.id = hits.id
     WHERE true${where}
     ORDER BY l.created_at DESC, l.seq DESC LIMIT ?`,
    [...bindings, take] as never[],
  );
  return rows;
}

/**
 * One newest-first page of the account's leads matching `q` (and `status` when given), in the list form of
 * `GET /api/v1/leads`. The cursor is signed with the account, `q` and `status`: another's is `cursor is not valid`.
 */
export async function searchLeads(
  q: Queryable,
  accountId: string,
  opts: SearchLeadsOptions,
): Promise<{ leads: LeadListItem[]; nextCursor: string | null }> {
  const text = checkOptions(opts);
  const filter = JSON.stringify([text.toLowerCase(), opts.status]);
  const after = opts.cursor === null ? null : decodeCursor(opts.cursorSecret, 'lead-search', accountId, filter, opts.cursor);
  const pattern = containsPattern(text);
  const take = opts.limit + 1;
  // A page filled by the walk is the answer; else the indexes' (the same rows when the walk reached the last lead).
  const walked = await walk(q, accountId, pattern, opts.status, after, take);
  const rows = walked.length >= take ? walked : await indexed(q, accountId, pattern, opts.status, after, take);
  const { leads, last } = await leadListItems(leadsRepository(q), accountId, rows.slice(0, opts.limit), opts.maxBytes);
  const more = leads.length < rows.length;
  const nextCursor =
    more && last ? encodeCursor(opts.cursorSecret, 'lead-search', accountId, filter, { at: last.created_at, seq: last.seq }) : null;
  return { leads, nextCursor };
}
