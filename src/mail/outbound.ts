import type { Config } from '../config.js';
import type { Queryable } from '../db.js';
import { randomBase62 } from '../ids.js';
import { leadForMail } from '../leads/recipient.js';
import { seal, unseal } from '../secrets/sealed.js';
import { messageIdFor, NotSent } from './mail.types.js';
import { senderOf } from './sender-identity.js';
import { threadsRepository } from './threads.repository.js';

/**
 * Characters of a reply token. Lowercase letters and digits only: some mail systems fold the case of
 * an address's local part, and the token must survive `reply+<token>@…` unchanged. About 5.1 bits
 * each (base62 folded to 36 symbols), so 26 make about 133 bits: not guessable.
 */
export const REPLY_TOKEN_LENGTH = 26;
/** What a token in a `reply+` address or a `/u/` URL may look like (shorter ones predate the length above). */
export const REPLY_TOKEN = /^[0-9a-z]{16,64}$/;

export const newReplyToken = () => randomBase62(REPLY_TOKEN_LENGTH).toLowerCase();

/** The bare, lowercased address of `Name <a@b>` or `a@b`. */
export const bareAddress = (address: string) => (/<([^>]+)>/.exec(address)?.[1] ?? address).trim().toLowerCase();

/** The shipment a fence is being written for: its ids, which piece of the card's work (`step`), when. */
export interface Fencing {
  id: string;
  accountId: string;
  cardId: string;
  /** 0 for a card's one piece of work; a sequence's step otherwise (one fence per card and step). */
  step: number;
  idempotencyKey: string;
  at: number;
}

/** What a mail's fence keeps so every ship of it (first, or a re-ship after a lost answer) carries the same headers. */
export interface ThreadDetails {
  /** The reply token sealed (src/secrets/sealed.ts): the database keeps only its hash and this. */
  replyTokenSealed: string;
  messageId: string;
  /** The visible From: the account's sending identity when it has one (`mail sender set`), else MAIL_FROM. */
  from: string;
  /** The account's lead this mail reaches, when one lists the address. */
  leadId?: string;
}

/**
 * Records the thread a shipped mail's replies, bounces and unsubscribes find again (mail_threads), in
 * the transaction that writes its fence; answers what the fence keeps. Idempotent per send id.
 */
export async function recordThread(
  trx: Queryable,
  config: Config,
  f: Fencing,
  to: string,
  sequenceId: string | null = null,
): Promise<ThreadDetails> {
  const address = bareAddress(to);
  const replyToken = newReplyToken();
  const messageId = messageIdFor(f.idempotencyKey, config.inbound.domain);
  const leadId = await leadForMail(trx, f.accountId, address);
  const from = await senderOf(trx, config, f.accountId);
  await threadsRepository(trx).insert({
    sendId: f.id,
    accountId: f.accountId,
    cardId: f.cardId,
    leadId,
    sequenceId,
    step: f.step,
    replyToken,
    messageId,
    to: address,
    createdAt: f.at,
  });
  const replyTokenSealed = await seal(trx, config.sealing, replyToken);
  return { replyTokenSealed, messageId, from, ...(leadId ? { leadId } : {}) };
}

/**
 * The reply token a fence's mail carries: its sealed copy opened, or the plaintext of a fence written before
 * tokens were sealed; null for a fence written before threads existed. A token that cannot be opened (its
 * sealing key is not given) sends nothing (NotSent, worth a retry): mail never goes out without its thread.
 */
export async function replyTokenOf(q: Queryable, config: Config, details: Record<string, unknown>): Promise<string | null> {
  if (typeof details.replyTokenSealed === 'string') {
    try {
      return await unseal(q, config.sealing, details.replyTokenSealed);
    } catch (err) {
      throw new NotSent(`the reply token of this mail could not be opened: ${(err as Error).message}`);
    }
  }
  return typeof details.replyToken === 'string' ? details.replyToken : null;
}

/** The one-click unsubscribe URL of a token (RFC 8058). */
export const unsubscribeUrl = (config: Config, token: string) => `${config.baseUrl}/u/${token}`;

/**
 * The envelope sender (SMTP MAIL FROM) of a mail with this token: `bounces+<token>@INBOUND_MAIL_DOMAIN`
 * (VERP). Every bounce of the mail comes back to an address that names its send, so a DSN is matched
 * by the address it was delivered to even when it quotes nothing of the original.
 */
export const bounceAddressFor = (config: Config, token: string) => `bounces+${token}@${config.inbound.domain}`;

/** What the shipping path hands a transport beside the draft: who it is from, to whom bounces go, the thread headers. */
export interface ShipHeaders {
  from: string;
  envelopeFrom: string | null;
  messageId: string;
  replyTo: string | null;
  headers: Record<string, string>;
}

/**
 * The From, envelope sender and thread headers of a mail, from what its fence keeps: the From chosen when
 * the fence was written (MAIL_FROM for a fence that kept none), the envelope sender `bounces+<token>@domain`,
 * Message-ID, Reply-To `reply+<token>@domain`, List-Unsubscribe (a mailto on the inbound domain and the
 * one-click URL) and List-Unsubscribe-Post. A fence written before threads existed has no token: its
 * mail gets a Message-ID only, and its bounces go to MAIL_FROM.
 */
export function threadHeaders(config: Config, details: Record<string, unknown>, idempotencyKey: string, token: string | null): ShipHeaders {
  const domain = config.inbound.domain;
  const from = typeof details.from === 'string' ? details.from : config.mail.from;
  const messageId = typeof details.messageId === 'string' ? details.messageId : messageIdFor(idempotencyKey, domain);
  if (!token) return { from, envelopeFrom: null, messageId, replyTo: null, headers: {} };
  return {
    from,
    envelopeFrom: bounceAddressFor(config, token),
    messageId,
    replyTo: `reply+${token}@${domain}`,
    headers: {
      'List-Unsubscribe': `<mailto:unsubscribe+${token}@${domain}?subject=unsubscribe>, <${unsubscribeUrl(config, token)}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}
