import { AnswerLost, messageIdOf, NotSent, type Accepted, type Lookup, type MailMessage, type MailTransport } from './mail.types.js';

export interface HttpMailOptions {
  /** Base URL of the provider's API, such as https://mail.example.com/v1. */
  url: string;
  key: string | null;
  sendTimeoutMs: number;
}

const NOT_REACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/**
 * An HTTP mail API that deduplicates on an `Idempotency-Key` header:
 * `POST {url}/messages` `{ from, to, subject, text, messageId, inReplyTo, replyTo, headers }` → 2xx `{ id }`
 * (`messageId` with angle brackets; `inReplyTo` and `replyTo` null when absent; `headers` an object of
 * further header fields to send as given: `List-Unsubscribe`, `List-Unsubscribe-Post`; `envelopeFrom` the
 * bare address bounces go to, the SMTP MAIL FROM the provider should use, null: its own), and
 * `GET {url}/messages/by-idempotency-key/{key}` → 200 `{ id }` or 404. A resend under the same key is safe.
 */
export function httpTransport(opts: HttpMailOptions): MailTransport {
  const headers = (key: string): Record<string, string> => ({
    'content-type': 'application/json',
    'idempotency-key': key,
    ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
  });
  return {
    name: 'http',
    canResend: true,
    async send(message: MailMessage, key: string): Promise<Accepted> {
      let res: Response;
      try {
        res = await fetch(`${opts.url}/messages`, {
          method: 'POST',
          headers: headers(key),
          body: JSON.stringify({
            from: message.from,
            to: message.to,
            subject: message.subject,
            text: message.text,
            messageId: messageIdOf(message, key),
            inReplyTo: message.inReplyTo ?? null,
            replyTo: message.replyTo ?? null,
            headers: message.headers ?? {},
            envelopeFrom: message.envelopeFrom ?? null,
          }),
          signal: AbortSignal.timeout(opts.sendTimeoutMs),
        });
      } catch (err) {
        const code = causeCode(err);
        if (code && NOT_REACHED.has(code)) throw new NotSent(`the mail API could not be reached (${code})`);
        throw new AnswerLost(`the mail API's answer was lost: ${(err as Error).message}`);
      }
      const body = (await res.json().catch(() => ({}))) as { id?: unknown };
      if (res.ok) return { providerId: typeof body.id === 'string' ? body.id : key };
      if (res.status >= 400 && res.status < 500 && res.status !== 409 && res.status !== 429) {
        throw new NotSent(`the mail API refused the message (HTTP ${res.status})`, true);
      }
      // 409 (same key in flight), 429 and 5xx: it may or may not have been taken; the key makes a resend safe.
      throw new AnswerLost(`the mail API answered HTTP ${res.status}`);
    },
    async lookup(key: string): Promise<Lookup> {
      const res = await fetch(`${opts.url}/messages/by-idempotency-key/${encodeURIComponent(key)}`, {
        headers: headers(key),
        signal: AbortSignal.timeout(opts.sendTimeoutMs),
      });
      if (res.status === 404) return { state: 'not_found' };
      if (!res.ok) throw new Error(`mail API lookup answered HTTP ${res.status}`);
      const body = (await res.json().catch(() => ({}))) as { id?: unknown };
      return { state: 'sent', providerId: typeof body.id === 'string' ? body.id : key };
    },
  };
}
