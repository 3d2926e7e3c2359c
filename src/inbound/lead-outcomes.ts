import type { Queryable } from '../db.js';
import type { InboundKind } from './inbound.types.js';

/** What came back for a lead: a received message processing applied to it (a reply, an auto-reply, a bounce…). */
export interface LeadInbound {
  id: string;
  kind: InboundKind;
  /** A reply's kind (interested, not_interested, …), else null. */
  replyKind: string | null;
  at: number;
}

/**
 * The received mail applied to the account's lead, newest first, at most `limit` (one index range:
 * `inbound_messages_account_lead`). Kept as long as the message's row (INBOUND_MESSAGE_RETENTION_DAYS).
 */
export async function inboundOfLead(q: Queryable, accountId: string, leadId: string, limit: number): Promise<LeadInbound[]> {
  const rows: { id: string; kind: InboundKind; reply_kind: string | null; received_at: number }[] = await q('inbound_messages')
    .where({ account_id: accountId, lead_id: leadId, status: 'applied' })
    .whereNotNull('kind')
    .orderBy('received_at', 'desc')
    .limit(limit)
    .select('id', 'kind', 'reply_kind', 'received_at');
  return rows.map((r) => ({ id: r.id, kind: r.kind, replyKind: r.reply_kind, at: Number(r.received_at) }));
}
