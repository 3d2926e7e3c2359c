import type { Queryable } from '../db.js';
import { NotFound } from '../errors.js';
import { leadsRepository } from './leads.repository.js';

/** The kinds of what happened to a lead, as its timeline lists them. */
export const TIMELINE_KINDS = ['sent', 'reply', 'auto_reply', 'bounce', 'unsubscribe', 'complaint', 'visit', 'research'] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** One thing that happened to a lead; the fields a kind has not are null. */
export interface TimelineEntry {
  kind: TimelineKind;
  at: number;
  /** sent: the address the mail went to. */
  to: string | null;
  /** sent: 0 for the first mail, then each follow-up. */
  step: number | null;
  /** reply: its kind (interested, not_interested, …). */
  replyKind: string | null;
  /** visit: the channel of the link, and where it led. */
  channel: string | null;
  url: string | null;
  /** research: the entry's key. */
  key: string | null;
}

/**
 * One area's part of the timeline: the lead's entries it owns, newest first, at most `limit`. The leads area stands
 * below mail and inbound, so their reads are handed in by the caller (the dashboard's route), never imported here
 * (docs/decisions/code-structure.md, "Every table has one owner").
 */
export type TimelineSource = (q: Queryable, accountId: string, leadId: string, limit: number) => Promise<TimelineEntry[]>;

/** An entry with the fields its kind has; the rest null. */
export const timelineEntry = (kind: TimelineKind, at: number, more: Partial<Omit<TimelineEntry, 'kind' | 'at'>> = {}): TimelineEntry => ({
  kind,
  at,
  to: null,
  step: null,
  replyKind: null,
  channel: null,
  url: null,
  key: null,
  ...more,
});

/** The lead's research entries by when each was last written: the leads area's own part. */
const researchSource: TimelineSource = async (q, accountId, leadId, limit) => {
  const rows: { key: string; updated_at: number }[] = await q('lead_research')
    .where({ account_id: accountId, lead_id: leadId })
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .select('key', 'updated_at');
  return rows.map((r) => timelineEntry('research', Number(r.updated_at), { key: r.key }));
};

/**
 * What happened to the account's lead, newest first, at most `limit` entries (`truncated` when there were more):
 * its research and each source's entries. Each source reads at most `limit + 1` through its own index, so the
 * whole is bounded however long the lead's history. NotFound for another account's lead.
 */
export async function leadTimeline(
  q: Queryable,
  accountId: string,
  leadId: string,
  sources: readonly TimelineSource[],
  limit: number,
): Promise<{ entries: TimelineEntry[]; truncated: boolean }> {
  if (!(await leadsRepository(q).byId(accountId, leadId))) throw new NotFound();
  const parts = await Promise.all([researchSource, ...sources].map((source) => source(q, accountId, leadId, limit + 1)));
  // Newest first; entries of one millisecond in a fixed order (by kind), so a page reads the same twice.
  const all = parts.flat().sort((a, b) => b.at - a.at || TIMELINE_KINDS.indexOf(a.kind) - TIMELINE_KINDS.indexOf(b.kind));
  return { entries: all.slice(0, limit), truncated: all.length > limit };
}
