import { Readable } from 'node:stream';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { composeRaw } from './compose.js';
import { AnswerLost, messageIdOf, NotSent, type Accepted, type Lookup, type MailMessage, type MailTransport } from './mail.types.js';

/** The bare address of `Name <a@b>` (the SMTP envelope takes only the address). */
const bare = (address: string) => /<([^>]+)>/.exec(address)?.[1] ?? address.trim();

export interface SmtpOptions {
  host: string;
  port: number;
  secure: boolean;
  auth: { user: string; pass: string } | null;
  connectTimeoutMs: number;
  sendTimeoutMs: number;
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
      const raw = await composeRaw(message, key);
      return new Promise<Accepted>((resolve, reject) => {
        let dataDone = false;
        let settled = false;
        const conn = new SMTPConnection({
          host: opts.host,
          port: opts.port,
          secure: opts.secure,
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
        const fail = (err: Error & { responseCode?: number }) => {
          const code = err.responseCode ?? 0;
          // A reply code is an answer, even to the message itself: 4xx/5xx after DATA means the server did
          // not take responsibility for it (RFC 5321 §4.2.5). Only silence after the data is a lost answer.
          if (dataDone && !code) return finish(new AnswerLost(`no answer from the SMTP server after the message was sent: ${err.message}`));
          return finish(new NotSent(`the SMTP server did not take the message: ${err.message}`, code >= 500));
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
