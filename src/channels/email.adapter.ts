import type { Config } from '../config.js';
import { mailDraftOf } from '../mail/mail-draft.js';
import { AnswerLost as MailAnswerLost, NotSent } from '../mail/mail.types.js';
import { recordThread, threadHeaders } from '../mail/outbound.js';
import { transportFor } from '../mail/transports.js';
import { AnswerLost, NotShipped, type ChannelAdapter, type Work } from './channel.types.js';

/** Mail's outcomes in the shipping path's words (mail keeps its own, so it needs nothing from here). */
function translated(err: unknown): unknown {
  if (err instanceof NotSent) return new NotShipped(err.message, err.permanent);
  if (err instanceof MailAnswerLost) return new AnswerLost(err.message);
  return err;
}

/**
 * `email`: the first adapter. Ships through the transport MAIL_TRANSPORT names; connected on every
 * account. Each mail's thread (its Message-ID and reply token) is recorded with its fence, and every
 * ship of it carries Reply-To and List-Unsubscribe from that (issue 16).
 */
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
    prepare: async (trx, fencing, work) => ({ ...(await recordThread(trx, config, fencing, work.to ?? '')) }),
    async ship(work, key) {
      const inReplyTo = typeof work.details.inReplyTo === 'string' ? work.details.inReplyTo : null;
      const thread = threadHeaders(config, work.details, key);
      try {
        return await transport.send({ from: m.from, to: work.to ?? '', subject: work.subject, text: work.body, inReplyTo, ...thread }, key);
      } catch (err) {
        throw translated(err);
      }
    },
    lookup: (key) => transport.lookup(key),
  };
}
