import type { Config } from '../config.js';
import { mailDraftOf } from '../mail/mail-draft.js';
import { AnswerLost as MailAnswerLost, NotSent } from '../mail/mail.types.js';
import { transportFor } from '../mail/transports.js';
import { AnswerLost, NotShipped, type ChannelAdapter, type Work } from './channel.types.js';

/** Mail's outcomes in the shipping path's words (mail keeps its own, so it needs nothing from here). */
function translated(err: unknown): unknown {
  if (err instanceof NotSent) return new NotShipped(err.message, err.permanent);
  if (err instanceof MailAnswerLost) return new AnswerLost(err.message);
  return err;
}

/** `email`: the first adapter. Ships through the transport MAIL_TRANSPORT names; connected on every account. */
export function emailAdapter(config: Config): ChannelAdapter {
  const transport = transportFor(config);
  const m = config.mail;
  return {
    kind: 'email',
    channel: 'email',
    service: 'the mail service',
    noun: 'mail',
    canReship: transport.canResend,
    needsRecipient: true,
    timings: {
      retryAfterSeconds: m.retryAfterSeconds,
      reconcileDelayMs: m.reconcileDelayMs,
      reconcileWindowMs: m.reconcileWindowMs,
      sendTimeoutMs: m.sendTimeoutMs,
    },
    workOf(draft, body): Work {
      const d = mailDraftOf(draft);
      return { kind: 'email', to: d.to, subject: d.subject, body: body ?? d.body, details: d.inReplyTo ? { inReplyTo: d.inReplyTo } : {} };
    },
    async ship(work, key) {
      const inReplyTo = typeof work.details.inReplyTo === 'string' ? work.details.inReplyTo : null;
      try {
        return await transport.send({ from: m.from, to: work.to ?? '', subject: work.subject, text: work.body, inReplyTo }, key);
      } catch (err) {
        throw translated(err);
      }
    },
    lookup: (key) => transport.lookup(key),
  };
}
