/** One outgoing message, as the review queue hands it to a transport. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  /** Message-ID of the mail this one answers (mail replies). */
  inReplyTo?: string | null;
  /** The thread it answers, oldest first (In-Reply-To last); In-Reply-To alone when absent. */
  references?: string[] | null;
  /** As sent, with angle brackets; `messageIdFor(key, 'localhost')` when absent. */
  messageId?: string;
  /** Where replies go: `reply+<token>@INBOUND_MAIL_DOMAIN`. */
  replyTo?: string | null;
  /** Further header fields, as sent (`List-Unsubscribe`, `List-Unsubscribe-Post`). */
  headers?: Record<string, string>;
  /** The SMTP envelope sender (MAIL FROM), where bounces go: `bounces+<token>@INBOUND_MAIL_DOMAIN`; absent: `from`'s address. */
  envelopeFrom?: string | null;
}

export interface Accepted {
  /** The provider's id for the accepted message. */
  providerId: string;
}

/**
 * The relay's answer about this recipient: its reply to RCPT TO or to DATA (the command or the message),
 * as the server wrote it (`550 5.1.1 <a@b>: Recipient address rejected`). A 5xx is a hard bounce, a 4xx a
 * soft failure; an answer to the connection, EHLO, AUTH or MAIL FROM is about us, never the recipient.
 */
export interface RecipientRefusal {
  code: number;
  reply: string;
}

/**
 * The provider was not reached, or refused the message before taking it: nothing was sent.
 * `permanent` means the provider answered no (a 5xx); otherwise a retry may succeed.
 */
export class NotSent extends Error {
  constructor(
    message: string,
    readonly permanent = false,
    readonly refusal: RecipientRefusal | null = null,
    /** Why the provider could not be reached, when that is worth telling the caller (a TLS failure and its cause). */
    readonly detail: string | null = null,
  ) {
    super(message);
    this.name = 'NotSent';
  }
}

/** The message may have reached the provider but its answer was lost: the send must be reconciled. */
export class AnswerLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerLost';
  }
}

export type Lookup = { state: 'sent'; providerId: string } | { state: 'not_found' } | { state: 'unknown' };

/**
 * A mail provider. `send` with the same idempotency key twice must never deliver two copies where the
 * transport says `canResend`; `lookup` answers whether a key was delivered (`unknown` when it cannot tell).
 */
export interface MailTransport {
  readonly name: 'local' | 'smtp' | 'http';
  /** True when a second `send` under the same key is deduplicated by the provider. */
  readonly canResend: boolean;
  /** Resolves once the provider accepted it; throws NotSent or AnswerLost. */
  send(message: MailMessage, idempotencyKey: string): Promise<Accepted>;
  lookup(idempotencyKey: string): Promise<Lookup>;
}

/**
 * The Message-ID we give a send: its idempotency key at the inbound mail domain, so copies are
 * recognisable and a reply's In-Reply-To names a send on a domain we receive mail for.
 */
export const messageIdFor = (idempotencyKey: string, domain: string) => `<${idempotencyKey}@${domain}>`;

/** The message's own Message-ID, else one from its key at `localhost` (INBOUND_MAIL_DOMAIN's default). */
export const messageIdOf = (message: MailMessage, idempotencyKey: string) => message.messageId ?? messageIdFor(idempotencyKey, 'localhost');
