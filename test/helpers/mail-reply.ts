import { simpleParser } from 'mailparser';

/** What a reply needs of the mail it answers: where replies go, its Message-ID and subject, whom it went to. */
export interface Answered {
  replyTo: string;
  messageId: string;
  subject: string;
  to: string;
}

/** Reads the parts of a sent message (as the SMTP stand-in got it) a reply answers. */
export async function answered(raw: string): Promise<Answered> {
  const m = await simpleParser(raw);
  const to = Array.isArray(m.to) ? m.to[0] : m.to;
  return {
    replyTo: m.replyTo!.value[0]!.address!,
    messageId: m.messageId!,
    subject: m.subject ?? '',
    to: to!.value[0]!.address!.toLowerCase(),
  };
}

let made = 0;

/**
 * A person's reply as a mail client writes it: multipart text and HTML, In-Reply-To and References naming our
 * Message-ID, the original quoted below. CRLF lines, as on the wire.
 */
export function replyMime(to: Answered, text: string, at = new Date()): string {
  const boundary = `b${Date.now().toString(36)}${++made}`;
  const domain = to.to.split('@')[1] ?? 'example.test';
  const quoted = `On ${at.toUTCString()} <${to.replyTo}> wrote:\n> ${to.subject}\n>\n> (the mail we sent)`;
  const lines = [
    `From: <${to.to}>`,
    `To: <${to.replyTo}>`,
    `Subject: Re: ${to.subject}`,
    `Date: ${at.toUTCString()}`,
    `Message-ID: <reply-${made}-${Date.now().toString(36)}@${domain}>`,
    `In-Reply-To: ${to.messageId}`,
    `References: ${to.messageId}`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset="UTF-8"',
    '',
    text,
    '',
    quoted,
    '',
    `--${boundary}`,
    'Content-Type: text/html; charset="UTF-8"',
    '',
    `<div dir="ltr">${text}</div><blockquote>${to.subject}</blockquote>`,
    '',
    `--${boundary}--`,
    '',
  ];
  return lines.join('\r\n');
}

/** An interested reply (the classifier reads it as positive). */
export const INTERESTED = 'Thanks, this sounds interesting. Could we set up a call next Tuesday afternoon?';
