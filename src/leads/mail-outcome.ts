import type { Queryable } from '../db.js';
import type { ReplyKind } from './leads.types.js';

/**
 * What the mail loop learned of a lead (issue 16): mail reached it (`contacted`, when a send settles),
 * it replied, its address bounced, or it unsubscribed.
 */
export interface LeadMailOutcome {
  status: 'contacted' | 'replied' | 'bounced' | 'unsubscribed';
  replyKind?: ReplyKind | null;
  declineReason?: string | null;
}

/**
 * The statuses each outcome may replace. A conversion is never undone by mail; an unsubscribe stands
 * against a later reply; a bounce only changes a lead nobody has heard from (a reply proves the address
 * worked, and a bounce of another contact must not hide it).
 */
const REPLACES: Record<LeadMailOutcome['status'], string[]> = {
  // Only forward: a lead we had not written to yet; never one that answered, bounced or left.
  contacted: ['new', 'researched', 'drafted'],
  replied: ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'declined'],
  bounced: ['new', 'researched', 'drafted', 'contacted'],
  unsubscribed: ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'declined', 'unsubscribed'],
};

/**
 * Records a mail outcome on the account's lead in one conditional update. `replyKind` and
 * `declineReason` are written only when given (a bounce leaves an earlier reply's kind). Answers whether
 * the lead changed (false: not the account's lead, or its status outranks the outcome).
 */
export async function recordLeadMailOutcome(
  q: Queryable,
  accountId: string,
  leadId: string,
  o: LeadMailOutcome,
  at: number,
): Promise<boolean> {
  const patch: Record<string, unknown> = { status: o.status, updated_at: at };
  if (o.replyKind !== undefined) patch.reply_kind = o.replyKind;
  if (o.declineReason !== undefined) patch.decline_reason = o.declineReason;
  const n = await q('leads').where({ account_id: accountId, id: leadId }).whereIn('status', REPLACES[o.status]).update(patch);
  return Number(n) > 0;
}
