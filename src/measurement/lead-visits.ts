import type { Queryable } from '../db.js';

/** A person's visit through a tracked link made for a lead (a bot's is not one). */
export interface LeadVisit {
  id: string;
  channel: string;
  url: string | null;
  at: number;
}

/**
 * The account's visits that came through links made for the lead, newest first, at most `limit` (one index range
 * per month partition: `visits_account_lead_at`). Kept as long as visits are (VISIT_RETENTION_DAYS).
 */
export async function visitsOfLead(q: Queryable, accountId: string, leadId: string, limit: number): Promise<LeadVisit[]> {
  const rows: { id: string; channel: string; url: string | null; at: number }[] = await q('visits')
    .where({ account_id: accountId, lead_id: leadId })
    .andWhere('bot', false)
    .orderBy('at', 'desc')
    .limit(limit)
    .select('id', 'channel', 'url', 'at');
  return rows.map((r) => ({ id: r.id, channel: r.channel, url: r.url, at: Number(r.at) }));
}
