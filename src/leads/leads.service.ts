import type { Knex } from 'knex';
import { getAccount } from '../accounts/accounts.service.js';
import { normaliseBlockValue, normaliseDomain } from '../blocklist/normalise.js';
import type { Queryable } from '../db.js';
import { BadRequest, NotFound } from '../errors.js';
import { newId } from '../ids.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { leadsRepository, type LeadRow, type ResearchRow } from './leads.repository.js';
import {
  LEAD_CAPS,
  LEAD_STATUSES,
  REPLY_KINDS,
  type Contact,
  type ContactInput,
  type LeadDetail,
  type LeadLabels,
  type LeadListItem,
  type UpsertLeadInput,
} from './leads.types.js';

/** Cuts `text` to at most `max` characters (Unicode code points, so no character is split). */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, max).join('');
}

const COLUMN_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** Runs `fn` inside `q` when it is already a transaction, else in a new one. */
async function inTransaction<T>(q: Queryable, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if ((q as Knex.Transaction).isTransaction) return fn(q as Knex.Transaction);
  return (q as Knex).transaction(fn);
}

const clean = (v: string | null | undefined): string | null => {
  const s = v?.trim();
  return s ? s : null;
};

/** A lead's domain as the leads area stores it (a website URL is read as its host), or null when it is not a domain name. */
export function leadDomain(raw: string): string | null {
  return normaliseDomain(raw.replace(/^https?:\/\//i, '').split(/[/?#]/)[0] ?? '');
}

function checkInput(input: UpsertLeadInput): string {
  const domain = leadDomain(input.domain);
  if (!domain) throw new BadRequest(`domain ${JSON.stringify(input.domain)} is not a domain name`);
  if (input.status !== undefined && !(LEAD_STATUSES as readonly string[]).includes(input.status)) {
    throw new BadRequest(`status must be one of ${LEAD_STATUSES.join(', ')}`);
  }
  if (input.replyKind != null && !(REPLY_KINDS as readonly string[]).includes(input.replyKind)) {
    throw new BadRequest(`replyKind must be one of ${REPLY_KINDS.join(', ')}`);
  }
  if (input.score != null && (!Number.isInteger(input.score) || input.score < 0 || input.score > 100)) {
    throw new BadRequest('score must be an integer from 0 to 100');
  }
  for (const r of input.research ?? []) {
    if (!r.key.trim() || r.key.length > 120) throw new BadRequest('research key must be 1 to 120 characters');
  }
  return domain;
}

/** A contact's email and profile URL in the form the block list compares. */
function contactKeys(c: ContactInput): { email: string | null; profileUrl: string | null } {
  const email = clean(c.email)?.toLowerCase() ?? null;
  const rawProfile = clean(c.profileUrl);
  const profile = rawProfile ? normaliseBlockValue(rawProfile) : null;
  return { email, profileUrl: profile?.kind === 'network' ? profile.value : rawProfile };
}

/**
 * Records a lead and what the agent learned about it, keyed by (account, normalised domain): a second
 * call for the same domain updates that lead. Research merges by key (a key given again replaces its
 * reasoning and sources); contacts merge by email or profile URL; `fields` merge by key; `draft: null`
 * clears the draft. Safe to run twice with the same input.
 */
export async function upsertLead(q: Queryable, accountId: string, input: UpsertLeadInput): Promise<{ id: string; created: boolean }> {
  const domain = checkInput(input);
  return inTransaction(q, async (trx) => {
    const repo = leadsRepository(trx);
    const at = Date.now();
    const created = await repo.insertIfAbsent({
      id: newId('lead'),
      account_id: accountId,
      domain,
      company_name: clean(input.companyName),
      status: input.status ?? 'new',
      reply_kind: input.replyKind ?? null,
      decline_reason: clean(input.declineReason),
      score: input.score ?? null,
      score_reasons: input.scoreReasons ?? [],
      vertical: null,
      archetype: null,
      tags: [],
      fields: input.fields ?? {},
      draft_subject: input.draft?.subject ?? null,
      draft_body: input.draft?.body ?? null,
      created_at: input.createdAt ?? at,
      updated_at: at,
    });
    const lead = (await repo.byDomain(accountId, domain, true))!;
    if (!created) {
      const patch: Partial<LeadRow> = { updated_at: at };
      if (input.companyName !== undefined) patch.company_name = clean(input.companyName) ?? lead.company_name;
      if (input.status !== undefined) patch.status = input.status;
      if (input.replyKind !== undefined) patch.reply_kind = input.replyKind;
      if (input.declineReason !== undefined) patch.decline_reason = clean(input.declineReason);
      if (input.score !== undefined) patch.score = input.score;
      if (input.scoreReasons !== undefined) patch.score_reasons = input.scoreReasons;
      if (input.fields !== undefined) patch.fields = { ...lead.fields, ...input.fields };
      if (input.draft !== undefined) {
        patch.draft_subject = input.draft?.subject ?? null;
        patch.draft_body = input.draft?.body ?? null;
      }
      await repo.update(lead.id, patch);
    }
    for (const r of input.research ?? []) {
      const sources = (r.sources ?? []).map((src) => ({ url: String(src.url ?? ''), title: String(src.title ?? '') }));
      await repo.upsertResearch(accountId, lead.id, { key: r.key.trim(), reasoning: String(r.reasoning ?? ''), sources }, at);
    }
    if (input.contacts?.length) await mergeContacts(repo, accountId, lead.id, input.contacts, at);
    return { id: lead.id, created };
  });
}

async function mergeContacts(
  repo: ReturnType<typeof leadsRepository>,
  accountId: string,
  leadId: string,
  contacts: ContactInput[],
  at: number,
) {
  const existing = await repo.contactRows(leadId);
  for (const c of contacts) {
    const { email, profileUrl } = contactKeys(c);
    const name = clean(c.name);
    const title = clean(c.title);
    if (!email && !profileUrl && !name) continue;
    const match = existing.find(
      (e) =>
        (email && e.email === email) ||
        (profileUrl && e.profile_url === profileUrl) ||
        (!email && !profileUrl && !e.email && !e.profile_url && e.name === name),
    );
    if (match) {
      const patch = {
        ...(name ? { name } : {}),
        ...(title ? { title } : {}),
        ...(email ? { email } : {}),
        ...(profileUrl ? { profile_url: profileUrl } : {}),
      };
      await repo.updateContact(match.id, patch);
      Object.assign(match, patch);
      continue;
    }
    const row = { id: newId('lc'), lead_id: leadId, account_id: accountId, name, email, title, profile_url: profileUrl, created_at: at };
    await repo.insertContact(row);
    existing.push({ ...row, seq: Number.MAX_SAFE_INTEGER, status: 'new', reply_kind: null });
  }
}

/** Column values: the lead's own field, else the reasoning of research under that key, else null. */
function columnValues(columns: string[], lead: LeadRow, research: ResearchRow[]): Array<{ key: string; value: string | null }> {
  const reasoning = new Map(research.filter((r) => r.lead_id === lead.id).map((r) => [r.key, r.reasoning]));
  return columns.map((key) => {
    const value = lead.fields[key] ?? reasoning.get(key) ?? null;
    return { key, value: value === null ? null : cut(String(value), LEAD_CAPS.fieldValue) };
  });
}

function listItem(lead: LeadRow, columns: string[], research: ResearchRow[], contact: Contact | null): LeadListItem {
  return {
    id: lead.id,
    domain: lead.domain,
    companyName: lead.company_name,
    status: lead.status,
    replyKind: lead.reply_kind,
    declineReason: lead.decline_reason,
    score: lead.score,
    scoreReasons: lead.score_reasons,
    vertical: lead.vertical,
    archetype: lead.archetype,
    tags: lead.tags,
    fields: columnValues(columns, lead, research),
    contact,
    createdAt: lead.created_at,
  };
}

/**
 * The list form of `candidates` (newest first), as many as fit `maxBytes` serialised (at least one), and the last
 * row shown (where a next page starts).
 */
export async function leadListItems(
  repo: ReturnType<typeof leadsRepository>,
  accountId: string,
  candidates: LeadRow[],
  maxBytes: number,
): Promise<{ leads: LeadListItem[]; last: LeadRow | undefined }> {
  const columns = await repo.columns(accountId);
  const ids = candidates.map((r) => r.id);
  const [research, contacts] = await Promise.all([
    columns.length ? repo.research(ids, columns) : Promise.resolve([]),
    repo.firstContacts(ids),
  ]);
  const leads: LeadListItem[] = [];
  let bytes = 2;
  for (const row of candidates) {
    const item = listItem(row, columns, research, contacts.get(row.id) ?? null);
    const size = Buffer.byteLength(JSON.stringify(item)) + (leads.length ? 1 : 0);
    if (leads.length && bytes + size > maxBytes) break;
    bytes += size;
    leads.push(item);
  }
  return { leads, last: candidates[leads.length - 1] };
}

export interface ListLeadsOptions {
  status: string | null;
  limit: number;
  cursor: string | null;
  cursorSecret: string;
  /** Byte budget of the serialised `leads` array; a page always holds at least one lead. */
  maxBytes: number;
}

/**
 * One newest-first page of leads. Keyset paging on (created_at, seq) means leads created while a client
 * pages land before its cursor: following `nextCursor` to null sees every earlier lead exactly once.
 */
export async function listLeads(
  q: Queryable,
  accountId: string,
  opts: ListLeadsOptions,
): Promise<{ leads: LeadListItem[]; nextCursor: string | null }> {
  const after = opts.cursor === null ? null : decodeCursor(opts.cursorSecret, 'leads', accountId, opts.status, opts.cursor);
  const repo = leadsRepository(q);
  const rows = await repo.page(accountId, { status: opts.status, after, limit: opts.limit + 1 });
  const { leads, last } = await leadListItems(repo, accountId, rows.slice(0, opts.limit), opts.maxBytes);
  const more = leads.length < rows.length;
  const nextCursor =
    more && last ? encodeCursor(opts.cursorSecret, 'leads', accountId, opts.status, { at: last.created_at, seq: last.seq }) : null;
  return { leads, nextCursor };
}

/** The detail form with every cap of spec 2.8 applied; NotFound for another account's id. */
export async function getLead(q: Queryable, accountId: string, id: string): Promise<LeadDetail> {
  const repo = leadsRepository(q);
  const lead = await repo.byId(accountId, id);
  if (!lead) throw new NotFound();
  const [columns, research, contacts] = await Promise.all([
    repo.columns(accountId),
    repo.research([id]),
    repo.contacts(id, LEAD_CAPS.contacts + 1),
  ]);
  const rank = (key: string) => {
    const i = columns.indexOf(key);
    return i === -1 ? columns.length : i;
  };
  const ordered = [...research].sort((a, b) => rank(a.key) - rank(b.key) || a.seq - b.seq);
  const shown = contacts.slice(0, LEAD_CAPS.contacts);
  return {
    ...listItem(lead, columns, research, shown[0] ?? null),
    draft:
      lead.draft_subject === null && lead.draft_body === null
        ? null
        : { subject: cut(lead.draft_subject ?? '', LEAD_CAPS.draftText), body: cut(lead.draft_body ?? '', LEAD_CAPS.draftText) },
    research: ordered.map((r) => {
      const fit = r.sources.filter((s) => s.url.length <= LEAD_CAPS.sourceUrl);
      const sources = fit.slice(0, LEAD_CAPS.sourcesPerEntry).map((s) => ({ url: s.url, title: s.title }));
      return { key: r.key, reasoning: cut(r.reasoning, LEAD_CAPS.reasoning), sources, sourcesTruncated: sources.length < r.sources.length };
    }),
    contacts: shown,
    contactsTruncated: contacts.length > LEAD_CAPS.contacts,
  };
}

/** Sets a lead's labels (undefined leaves one alone, null clears it) and returns them as stored. */
export async function labelLead(
  q: Queryable,
  accountId: string,
  id: string,
  labels: { vertical?: string | null; archetype?: string | null; tags?: string[] | null },
): Promise<LeadLabels> {
  const patch: Partial<Pick<LeadLabels, 'vertical' | 'archetype' | 'tags'>> = {};
  if (labels.vertical !== undefined) patch.vertical = labels.vertical;
  if (labels.archetype !== undefined) patch.archetype = labels.archetype;
  if (labels.tags !== undefined) patch.tags = labels.tags ?? [];
  const repo = leadsRepository(q);
  const stored = await repo.setLabels(accountId, id, patch, Date.now());
  if (!stored) throw new NotFound();
  return stored;
}

/** Replaces the account's lead columns (the `fields` of every lead read). Keys are deduplicated, order kept. */
export async function setLeadColumns(q: Queryable, accountId: string, keys: string[]): Promise<string[]> {
  await getAccount(q, accountId);
  const unique = [...new Set(keys.map((k) => k.trim()).filter(Boolean))];
  if (!unique.length) throw new BadRequest('--keys must name at least one column');
  const bad = unique.find((k) => !COLUMN_KEY.test(k));
  if (bad !== undefined) throw new BadRequest(`--keys has "${bad}"; a key is 1 to 64 characters of A-Z a-z 0-9 _ . -`);
  if (unique.length > LEAD_CAPS.columns) throw new BadRequest(`--keys must name at most ${LEAD_CAPS.columns} columns`);
  await leadsRepository(q).setColumns(accountId, unique, Date.now());
  return unique;
}

export async function getLeadColumns(q: Queryable, accountId: string): Promise<string[]> {
  return leadsRepository(q).columns(accountId);
}
