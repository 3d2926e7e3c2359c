import type { Queryable } from '../db.js';

/** A mail sent to one of a lead's contacts: its thread row (written with the fence when the mail shipped). */
export interface LeadSend {
  sendId: string;
  /** Lowercased bare address. */
  to: string;
  /** 0 for the first mail, then each follow-up of its sequence. */
  step: number;
  at: number;
}

/** The mail sent to the account's lead, newest first, at most `limit` (one index range: `mail_threads_account_lead`). */
export async function sendsOfLead(q: Queryable, accountId: string, leadId: string, limit: number): Promise<LeadSend[]> {
  const rows: { send_id: string; to_address: string; step: number; created_at: number }[] = await q('mail_threads')
    .where({ account_id: accountId, lead_id: leadId })
    .orderBy('created_at', 'desc')
    .limit(limit)
    .select('send_id', 'to_address', 'step', 'created_at');
  return rows.map((r) => ({ sendId: r.send_id, to: r.to_address, step: r.step, at: Number(r.created_at) }));
}
