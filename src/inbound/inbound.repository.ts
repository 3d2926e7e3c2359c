import type { Queryable } from '../db.js';
import { hashReplyToken } from '../mail/threads.repository.js';
import type { InboundKind, InboundStatus } from './inbound.types.js';

/**
 * One received message as kept (table `inbound_messages`); `raw` only when asked for (processing reads only
 * `received` rows, whose bytes are never dropped; retention nulls the bytes of settled ones).
 */
export interface InboundMessage {
  id: string;
  /** Known before the message is stored: the token it was sent to, the inbound URL, or what the listener placed it by. */
  accountId: string;
  via: 'smtp' | 'http';
  mailFrom: string | null;
  rcptTo: string[];
  /** SMTP only: the client's IP address and its HELO/EHLO name (what a sender check of our own needs). */
  clientIp: string | null;
  helo: string | null;
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
  /** The account it is stored under (docs/decisions/inbound-smtp.md "Every message is stored under its account"). */
  accountId: string;
  via: 'smtp' | 'http';
  mailFrom: string | null;
  rcptTo: string[];
  clientIp?: string | null;
  helo?: string | null;
  raw: Buffer;
  receivedAt: number;
}

/** What processing made of a message: its final status and what it was (its account never changes). */
export interface InboundResult {
  status: Exclude<InboundStatus, 'received'>;
  reason?: string | null;
  kind?: InboundKind | null;
  replyKind?: string | null;
  details?: Record<string, unknown> | null;
  sendId?: string | null;
  leadId?: string | null;
  headerMessageId?: string | null;
}

interface Row {
  id: string;
  account_id: string;
  via: 'smtp' | 'http';
  mail_from: string | null;
  rcpt_to: string[];
  client_ip: string | null;
  helo: string | null;
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
  'client_ip',
  'helo',
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
  clientIp: r.client_ip,
  helo: r.helo,
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
        client_ip: m.clientIp ?? null,
        helo: m.helo ?? null,
        raw: m.raw,
        size: m.raw.length,
        received_at: m.receivedAt,
      });
    },
    async find(id: string): Promise<InboundMessage | null> {
      const row: Row | undefined = await q('inbound_messages').select(COLUMNS).where({ id }).first();
      return row ? toMessage(row) : null;
    },
    /** The row with its raw bytes. */
    async withRaw(id: string): Promise<(InboundMessage & { raw: Buffer }) | null> {
      return (await this.withRawMany([id])).get(id) ?? null;
    },
    /** Status and size of many messages (what processing checks before it reads the bytes). */
    async statusAndSize(ids: string[]): Promise<Map<string, { status: InboundStatus; size: number }>> {
      const rows: { id: string; status: InboundStatus; size: number }[] = await q('inbound_messages')
        .select('id', 'status', 'size')
        .whereIn('id', ids);
      return new Map(rows.map((r) => [r.id, { status: r.status, size: r.size }]));
    },
    /** `withRaw` (unlocked) for many ids at once. */
    async withRawMany(ids: string[]): Promise<Map<string, InboundMessage & { raw: Buffer }>> {
      const rows: (Row & { raw: Buffer })[] = await q('inbound_messages')
        .select([...COLUMNS, 'raw'])
        .whereIn('id', ids);
      return new Map(rows.map((r) => [r.id, { ...toMessage(r), raw: r.raw }]));
    },
    /** Counts one more processing try (bounded by the caller). */
    async countAttempt(id: string): Promise<number> {
      const [row] = await q('inbound_messages').where({ id }).increment('attempts', 1).returning('attempts');
      return Number((row as { attempts: number } | undefined)?.attempts ?? 0);
    },
    /** Settles a `received` message; false when it was settled already (a retried job changes nothing). */
    async settle(id: string, r: InboundResult, at: number): Promise<boolean> {
      return (await this.settleMany([{ id, result: r }], at)).has(id);
    },
    /**
     * Settles `received` messages in one statement (a field a result leaves out keeps its value); returns
     * the ids that were still `received` (the others had been settled: a retried job changes nothing).
     */
    async settleMany(items: { id: string; result: InboundResult }[], at: number): Promise<Set<string>> {
      if (!items.length) return new Set();
      const keep = (v: unknown) => v === undefined;
      const values = items.flatMap(({ id, result: r }) => [
        id,
        r.status,
        r.reason ?? null,
        keep(r.kind),
        r.kind ?? null,
        keep(r.replyKind),
        r.replyKind ?? null,
        keep(r.details),
        r.details ? JSON.stringify(r.details) : null,
        keep(r.sendId),
        r.sendId ?? null,
        keep(r.leadId),
        r.leadId ?? null,
        keep(r.headerMessageId),
        r.headerMessageId ?? null,
      ]);
      const row = `(?::text, ?::text, ?::text, ${Array.from({ length: 6 }, () => '?::boolean, ?::text').join(', ')})`;
      const { rows } = await q.raw<{ rows: { id: string }[] }>(
        `UPDATE inbound_messages AS m SET status = v.status, reason = v.reason, processed_at = ?::bigint,
           kind = CASE WHEN v.k_kind THEN m.kind ELSE v.kind END,
           reply_kind = CASE WHEN v.k_reply_kind THEN m.reply_kind ELSE v.reply_kind END,
           details = CASE WHEN v.k_details THEN m.details ELSE v.details::jsonb END,
           send_id = CASE WHEN v.k_send THEN m.send_id ELSE v.send_id END,
           lead_id = CASE WHEN v.k_lead THEN m.lead_id ELSE v.lead_id END,
           header_message_id = CASE WHEN v.k_header THEN m.header_message_id ELSE v.header_message_id END
         FROM (VALUES ${items.map(() => row).join(', ')})
           AS v(id, status, reason, k_kind, kind, k_reply_kind, reply_kind, k_details, details,
                k_send, send_id, k_lead, lead_id, k_header, header_message_id)
         WHERE m.id = v.id AND m.status = 'received'
         RETURNING m.id`,
        [at, ...values],
      );
      return new Set(rows.map((r) => r.id));
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
    /**
     * The account a live `reply+`/`unsubscribe+` token belongs to and the raw bytes that account keeps (one
     * indexed row each); null for a token that names no shipped mail (an account's deletion takes its threads).
     */
    async tokenAccount(token: string): Promise<{ accountId: string; storedBytes: number } | null> {
      const { rows } = await q.raw<{ rows: { account_id: string; bytes: string | number }[] }>(
        `SELECT t.account_id, COALESCE(b.bytes, 0) AS bytes FROM mail_threads t
           LEFT JOIN inbound_account_bytes b ON b.account_id = t.account_id
         WHERE t.reply_token_hash = ?`,
        [hashReplyToken(token)],
      );
      const row = rows[0];
      return row ? { accountId: row.account_id, storedBytes: Number(row.bytes) } : null;
    },
    /** The raw inbound bytes an account keeps (its storage cap). */
    async accountBytes(accountId: string): Promise<number> {
      const row: { bytes: string | number } | undefined = await q('inbound_account_bytes')
        .select('bytes')
        .where({ account_id: accountId })
        .first();
      return Number(row?.bytes ?? 0);
    },
    /**
     * Drops the raw bytes of up to `limit` messages in these statuses that arrived before `before` (the
     * row and its outcome stay); returns how many. The partial index on rows still holding bytes finds them.
     */
    async dropRaw(statuses: InboundStatus[], before: number, limit: number): Promise<number> {
      const { rowCount } = await q.raw<{ rowCount: number }>(
        `UPDATE inbound_messages SET raw = NULL WHERE id IN (
           SELECT id FROM inbound_messages WHERE raw IS NOT NULL AND status = ANY(?::text[]) AND received_at < ?
           ORDER BY received_at LIMIT ?)`,
        [statuses, before, limit],
      );
      return rowCount ?? 0;
    },
    /** Newest first, for `mail inbound-list` (an account's, or every account's). */
    async list(f: { accountId?: string; status?: InboundStatus; limit: number }): Promise<InboundMessage[]> {
      const query = q('inbound_messages').select(COLUMNS).orderBy('received_at', 'desc').orderBy('id', 'desc').limit(f.limit);
      if (f.accountId) query.where({ account_id: f.accountId });
      if (f.status) query.where({ status: f.status });
      const rows: Row[] = await query;
      return rows.map(toMessage);
    },
  };
}
