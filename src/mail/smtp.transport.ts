import { Readable } from 'node:stream';
import tls from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { composeRaw } from './compose.js';
import type { DkimSign } from './dkim.js';
import {
  AnswerLost,
  messageIdOf,
  NotSent,
  type Accepted,
  type Lookup,
  type MailMessage,
  type MailTransport,
  type RecipientRefusal,
} from './mail.types.js';

/** The bare address of `Name <a@b>` (the SMTP envelope takes only the address). */
const bare = (address: string) => /<([^>]+)>/.exec(address)?.[1] ?? address.trim();

/** What nodemailer's connection puts on an error: the server's reply, its code, and the command it answered. */
type SmtpError = Error & { responseCode?: number; response?: string; command?: string; code?: string; originalCode?: string };

/** OpenSSL's and Node's codes for a TLS handshake or certificate failure (nodemailer keeps them as `originalCode`). */
const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL|EPROTO/;

/**
 * The TLS failure an error is, in words and with its code (`self-signed certificate
 * (DEPTH_ZERO_SELF_SIGNED_CERT)`), or null when it is not about TLS: a STARTTLS that failed (`ETLS`) or a
 * handshake or certificate check that did (its OpenSSL code, under nodemailer's `ESOCKET`).
 */
export function tlsFailure(err: SmtpError): string | null {
  const original = err.originalCode ?? '';
  if (err.code !== 'ETLS' && !TLS_CODE.test(original)) return null;
  // Node's own hint after a semicolon ("; if the root CA is installed locally, try …") is not the cause.
  const reason = err.message
    .replace(/^Error initiating TLS - /, '')
    .split(';')[0]!
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return `${reason} (${original || err.code})`;
}

/**
 * The server's answer about the recipient: a 4xx/5xx to RCPT TO (one recipient a send, so "all
 * recipients were rejected" is this one) or to DATA (the command, or the message after its dot). Null
 * for anything else: no answer, or an answer to the connection, EHLO, AUTH or MAIL FROM.
 */
function recipientRefusal(err: SmtpError): RecipientRefusal | null {
  const code = err.responseCode ?? 0;
  if (code < 400 || code > 599 || (err.command !== 'RCPT TO' && err.command !== 'DATA')) return null;
  const reply = (err.response ?? String(code)).replace(/\s+/g, ' ').trim().slice(0, 500);
  return { code, reply };
}

export interface SmtpOptions {
  host: string;
  port: number;
  secure: boolean;
  auth: { user: string; pass: string } | null;
  connectTimeoutMs: number;
  sendTimeoutMs: number;
  /** The EHLO name (MAIL_EHLO_NAME, else MAIL_FROM's domain); null: nodemailer's (the host name when dotted, else [127.0.0.1]). */
  ehloName?: string | null;
  /** Refuse to send unless the server offers STARTTLS (SMTP_REQUIRE_TLS); nothing is sent in the clear. */
  requireTls?: boolean;
  /** PEM certificates of the CAs trusted for the relay's TLS besides Node's own (SMTP_TLS_CA_FILE's contents). */
  ca?: string | null;
  /** Adds the From domain's DKIM signatures (src/mail/dkim.ts); absent: sent unsigned. */
  sign?: DkimSign;
}

/**
 * SMTP through nodemailer's connection. What matters is telling "never sent" from "answer lost": the
 * message goes in as a stream, and until that stream has been read to its end the terminating dot
 * was not written, so the server cannot have accepted it (NotSent). After that, a 4xx/5xx reply to the
 * message is a refusal (NotSent); silence, a dropped connection or a timeout waiting for the reply, is
 * AnswerLost. SMTP has no lookup: `unknown`.
 */
export function smtpTransport(opts: SmtpOptions): MailTransport {
  return {
    name: 'smtp',
    canResend: false,
    async send(message: MailMessage, key: string): Promise<Accepted> {
      const composed = await composeRaw(message, key);
      const raw = opts.sign ? await opts.sign(composed, message.from) : composed;
      return new Promise<Accepted>((resolve, reject) => {
        let dataDone = false;
        let settled = false;
        const conn = new SMTPConnection({
          host: opts.host,
          port: opts.port,
          secure: opts.secure,
          ...(opts.ehloName ? { name: opts.ehloName } : {}),
          ...(opts.requireTls ? { requireTLS: true } : {}),
          // Node's CA store plus the private CA: `ca` alone would replace the store.
          ...(opts.ca ? { tls: { ca: [...tls.rootCertificates, opts.ca] } } : {}),
          connectionTimeout: opts.connectTimeoutMs,
          greetingTimeout: opts.connectTimeoutMs,
          socketTimeout: opts.sendTimeoutMs,
          socketCloseTimeout: 0,
          logger: false,
        });
        const finish = (err: Error | null, accepted?: Accepted) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) conn.close();
          else conn.quit();
          if (err) reject(err);
          else resolve(accepted!);
        };
        const fail = (err: SmtpError) => {
          const code = err.responseCode ?? 0;
          // A reply code is an answer, even to the message itself: 4xx/5xx after DATA means the server did
          // not take responsibility for it (RFC 5321 §4.2.5). Only silence after the data is a lost answer.
          if (dataDone && !code) return finish(new AnswerLost(`no answer from the SMTP server after the message was sent: ${err.message}`));
          // Nothing was sent over a connection whose TLS failed; the cause is what an operator needs to see.
          const tlsCause = tlsFailure(err);
          if (tlsCause) return finish(new NotSent(`TLS with the SMTP server failed: ${tlsCause}`, false, null, `TLS failed: ${tlsCause}`));
          return finish(new NotSent(`the SMTP server did not take the message: ${err.message}`, code >= 500, recipientRefusal(err)));
        };
        const timer = setTimeout(() => fail(new Error('timed out')), opts.sendTimeoutMs);
        conn.on('error', fail);
        conn.on('end', () => fail(new Error('connection closed')));
        conn.connect((err) => {
          if (err) return fail(err);
          const go = () => {
            const stream = Readable.from([raw]);
            stream.on('end', () => {
              dataDone = true;
            });
            conn.send({ from: message.envelopeFrom ?? bare(message.from), to: [bare(message.to)] }, stream, (sendErr, info) => {
              if (sendErr) return fail(sendErr);
              finish(null, { providerId: info?.serverMessageId ?? messageIdOf(message, key) });
            });
          };
          if (!opts.auth) return go();
          conn.login({ user: opts.auth.user, pass: opts.auth.pass }, (loginErr) => (loginErr ? fail(loginErr) : go()));
        });
      });
    },
    async lookup(): Promise<Lookup> {
      return { state: 'unknown' };
    },
  };
}
