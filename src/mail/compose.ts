import MailComposer from 'nodemailer/lib/mail-composer';
import { messageIdOf, type MailMessage } from './mail.types.js';

/** The RFC 822 bytes of a message: its Message-ID (else one from the idempotency key), Reply-To and extra headers. */
export async function composeRaw(message: MailMessage, idempotencyKey: string): Promise<Buffer> {
  const composer = new MailComposer({
    from: message.from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    messageId: messageIdOf(message, idempotencyKey),
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    ...(message.headers ? { headers: message.headers } : {}),
    ...(message.inReplyTo
      ? { inReplyTo: message.inReplyTo, references: message.references?.length ? message.references : message.inReplyTo }
      : {}),
  });
  return new Promise((resolve, reject) => composer.compile().build((err, buf) => (err ? reject(err) : resolve(buf))));
}
