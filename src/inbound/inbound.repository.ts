import type { Queryable } from '../db.js';
import type { InboundKind, InboundStatus } from './inbound.types.js';

/** One received message as kept (table `inbound_messages`); `raw` only when asked for. */
export interface InboundMessage {
  id: string;
  accountId: string | null;
  via: 'smtp' | 'http';
  mailFrom: string | null;
  rcptTo: string[];
  size: number;
  receivedAt: number;
  status: InboundStatus;
  reason: string | null;
  kind: InboundKind | null;
  replyKind: string | null;
  details: Record<string, unknown> | null;
  sendId: string | null;
  leadId: string | null;
  headerMessageId: string | null;
  attempts: number;
  processedAt: number | null;
}

export interface NewInbound {
  id: string;
  /** Known when the message came in on an account's inbound URL. */
  accountId: string | null;
  via: 'smtp' | 'http';
  mailFrom: string | null;
  rcptTo: string[];
  raw: Buffer;
  receivedAt: number;
}

/** What processing made of a message: its final status and, once placed, whose it is and what it was. */
export interface InboundResult {
  status: Exclude<InboundStatus, 'received'>;
  reason?: string | null;
  accountId?: string | null;
  kind?: InboundKind | null;
  replyKind?: string | null;
  details?: Record<string, unknown> | null;
  sendId?: string | null;
  leadId?: string | null;
  headerMessageId?: string | null;
}

interface Row {
  id: string;
  account_id: string | null;
  via: 'smtp' | 'http';
  mail_from: string | null;
  rcpt_to: string[];
  size: number;
  received_at: string | number;
  status: InboundStatus;
  reason: string | null;
  kind: InboundKind | null;
  reply_kind: string | null;
  details: Record<string, unknown> | null;
  send_id: string | null;
  lead_id: string | null;
  header_message_id: string | null;
  attempts: number;
  processed_at: string | number | null;
}

const COLUMNS = [
  'id',
  'account_id',
  'via',
  'mail_from',
  'rcpt_to',
  'size',
  'received_at',
  'status',
  'reason',
  'kind',
  'reply_kind',
  'details',
  'send_id',
  'lead_id',
  'header_message_id',
  'attempts',
  'processed_at',
];

const toMessage = (r: Row): InboundMessage => ({
  id: r.id,
  accountId: r.account_id,
  via: r.via,
  mailFrom: r.mail_from,
  rcptTo: r.rcpt_to,
  size: r.size,
  receivedAt: Number(r.received_at),
  status: r.status,
  reason: r.reason,
  kind: r.kind,
  replyKind: r.reply_kind,
  details: r.details,
  sendId: r.send_id,
  leadId: r.lead_id,
  headerMessageId: r.header_message_id,
  attempts: r.attempts,
  processedAt: r.processed_at === null ? null : Number(r.processed_at),
});

/** Received mail: stored whole on arrival, then settled once by processing (only a `received` row changes). */
export function inboundRepository(q: Queryable) {
  return {
    async insert(m: NewInbound): Promise<void> {
      await q('inbound_messages').insert({
        id: m.id,
        account_id: m.accountId,
        via: m.via,
        mail_from: m.mailFrom,
        rcpt_to: JSON.stringify(m.rcptTo),
        raw: m.raw,
        size: m.raw.length,
        received_at: m.receivedAt,
      });
    },
    async find(id: string): Promise<InboundMessage | null> {
      const row: Row | undefined = await q('inbound_messages').select(COLUMNS).where({ id }).first();
      return row ? toMessage(row) : null;
    },
    /** The row with its raw bytes, locked for this transaction when `lock` (processing holds it while it applies). */
    async withRaw(id: string, lock = false): Promise<(InboundMessage & { raw: Buffer }) | null> {
      let query = q('inbound_messages')
        .select([...COLUMNS, 'raw'])
        .where({ id })
        .first<(Row & { raw: Buffer }) | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? { ...toMessage(row), raw: row.raw } : null;
    },
    /** Counts one more processing try (bounded by the caller). */
    async countAttempt(id: string): Promise<number> {
      const [row] = await q('inbound_messages').where({ id }).increment('attempts', 1).returning('attempts');
      return Number((row as { attempts: number } | undefined)?.attempts ?? 0);
    },
    /** Settles a `received` message; false when it was settled already (a retried job changes nothing). */
    async settle(id: string, r: InboundResult, at: number): Promise<boolean> {
      const patch: Record<string, unknown> = { status: r.status, reason: r.reason ?? null, processed_at: at };
      if (r.accountId !== undefined) patch.account_id = r.accountId;
      if (r.kind !== undefined) patch.kind = r.kind;
      if (r.replyKind !== undefined) patch.reply_kind = r.replyKind;
      if (r.details !== undefined) patch.details = r.details === null ? null : JSON.stringify(r.details);
      if (r.sendId !== undefined) patch.send_id = r.sendId;
      if (r.leadId !== undefined) patch.lead_id = r.leadId;
      if (r.headerMessageId !== undefined) patch.header_message_id = r.headerMessageId;
      const n = await q('inbound_messages').where({ id, status: 'received' }).update(patch);
      return Number(n) > 0;
    },
    /** An earlier message of this account with the same Message-ID header that was applied (a provider's retry). */
    async appliedWithHeaderId(accountId: string, headerMessageId: string, exceptId: string): Promise<string | null> {
      const row: { id: string } | undefined = await q('inbound_messages')
        .select('id')
        .where({ account_id: accountId, header_message_id: headerMessageId, status: 'applied' })
        .whereNot({ id: exceptId })
        .first();
      return row?.id ?? null;
    },
    /** Messages still `received` that arrived before `before` (the sweep hands them to processing again). */
    async stillReceived(before: number, limit: number): Promise<string[]> {
      const rows: { id: string }[] = await q('inbound_messages')
        .select('id')
        .where({ status: 'received' })
        .andWhere('received_at', '<', before)
        .orderBy('received_at')
        .limit(limit);
      return rows.map((r) => r.id);
    },
    /** Newest first, for `mail inbound-list` (an account's, or every account's and the unplaced). */
    async list(f: { accountId?: string; status?: InboundStatus; limit: number }): Promise<InboundMessage[]> {
      const query = q('inbound_messages').select(COLUMNS).orderBy('received_at', 'desc').orderBy('id', 'desc').limit(f.limit);
      if (f.accountId) query.where({ account_id: f.accountId });
      if (f.status) query.where({ status: f.status });
      const rows: Row[] = await query;
      return rows.map(toMessage);
    },
  };
}
