import MailComposer from 'nodemailer/lib/mail-composer';
import { messageIdFor, type MailMessage } from './mail.types.js';

/** The RFC 822 bytes of a message, with a Message-ID derived from the idempotency key. */
export async function composeRaw(message: MailMessage, idempotencyKey: string): Promise<Buffer> {
  const composer = new MailComposer({
    from: message.from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    messageId: messageIdFor(idempotencyKey),
    ...(message.inReplyTo ? { inReplyTo: message.inReplyTo, references: message.inReplyTo } : {}),
  });
  return new Promise((resolve, reject) => composer.compile().build((err, buf) => (err ? reject(err) : resolve(buf))));
}
