import type { Queryable } from '../db.js';
import { hashToken } from '../tokens/token-format.js';

/**
 * What is stored of a reply token and looked up: its SHA-256, hex, as API and hook tokens are. The plaintext is
 * only in the mail sent (and sealed in its fence, for a re-ship).
 */
export const hashReplyToken = hashToken;

/** One shipped mail as the return path finds it again (table `mail_threads`, written with the fence). */
export interface Thread {
  sendId: string;
  accountId: string;
  cardId: string;
  leadId: string | null;
  sequenceId: string | null;
  step: number;
  /** SHA-256 of the reply token (never the token). */
  tokenHash: string;
  /** With angle brackets, as in the Message-ID header. */
  messageId: string;
  /** Lowercased bare address. */
  to: string;
  createdAt: number;
}

interface Row {
  send_id: string;
  account_id: string;
  card_id: string;
  lead_id: string | null;
  sequence_id: string | null;
  step: number;
  reply_token_hash: string;
  message_id: string;
  to_address: string;
  created_at: string | number;
}

const toThread = (r: Row): Thread => ({
  sendId: r.send_id,
  accountId: r.account_id,
  cardId: r.card_id,
  leadId: r.lead_id,
  sequenceId: r.sequence_id,
  step: r.step,
  tokenHash: r.reply_token_hash,
  messageId: r.message_id,
  to: r.to_address,
  createdAt: Number(r.created_at),
});

export function threadsRepository(q: Queryable) {
  return {
    /** Keeps the token's hash only. */
    async insert(t: Omit<Thread, 'tokenHash'> & { replyToken: string }): Promise<void> {
      await q('mail_threads')
        .insert({
          send_id: t.sendId,
          account_id: t.accountId,
          card_id: t.cardId,
          lead_id: t.leadId,
          sequence_id: t.sequenceId,
          step: t.step,
          reply_token_hash: hashReplyToken(t.replyToken),
          message_id: t.messageId,
          to_address: t.to.toLowerCase(),
          created_at: t.createdAt,
        })
        .onConflict(['account_id', 'send_id'])
        .ignore();
    },
    async bySend(sendId: string): Promise<Thread | null> {
      const row: Row | undefined = await q('mail_threads').where({ send_id: sendId }).first();
      return row ? toThread(row) : null;
    },
    /** The thread a `reply+<token>` address or a one-click URL names (any account: the token is the key). */
    async byToken(token: string): Promise<Thread | null> {
      const row: Row | undefined = await q('mail_threads')
        .where({ reply_token_hash: hashReplyToken(token) })
        .first();
      return row ? toThread(row) : null;
    },
    /** As `byToken`, holding the row until the transaction ends: one writer per thread at a time. */
    async lockByToken(token: string): Promise<Thread | null> {
      const row: Row | undefined = await q('mail_threads')
        .where({ reply_token_hash: hashReplyToken(token) })
        .forUpdate()
        .first();
      return row ? toThread(row) : null;
    },
    /** The threads of these tokens (any account), for lookups made together. */
    async byTokens(tokens: string[]): Promise<Thread[]> {
      if (!tokens.length) return [];
      const rows: Row[] = await q('mail_threads').whereIn('reply_token_hash', tokens.map(hashReplyToken));
      return rows.map(toThread);
    },
    /** Threads whose Message-ID is among `ids` (In-Reply-To / References), newest first. */
    async byMessageIds(ids: string[]): Promise<Thread[]> {
      if (!ids.length) return [];
      const rows: Row[] = await q('mail_threads').whereIn('message_id', ids).orderBy('created_at', 'desc');
      return rows.map(toThread);
    },
    /** The thread of one step of a card's work (a sequence's first mail: step 0). */
    async ofCardStep(accountId: string, cardId: string, step: number): Promise<Thread | null> {
      const row: Row | undefined = await q('mail_threads')
        .where({ account_id: accountId, card_id: cardId, step })
        .orderBy('created_at', 'desc')
        .first();
      return row ? toThread(row) : null;
    },
    /** The account's latest mail to this address (a reply that kept no thread headers). */
    async latestTo(accountId: string, address: string): Promise<Thread | null> {
      const row: Row | undefined = await q('mail_threads')
        .where({ account_id: accountId, to_address: address.toLowerCase() })
        .orderBy('created_at', 'desc')
        .first();
      return row ? toThread(row) : null;
    },
  };
}
