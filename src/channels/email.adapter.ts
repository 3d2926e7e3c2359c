import { isDemoAccount } from '../accounts/accounts.service.js';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { mailDraftOf } from '../mail/mail-draft.js';
import { AnswerLost as MailAnswerLost, NotSent } from '../mail/mail.types.js';
import { recordThread, replyTokenOf, threadHeaders } from '../mail/outbound.js';
import { sequenceIdFor } from '../mail/sequences.repository.js';
import { transportFor } from '../mail/transports.js';
import { trackTextLinks } from '../measurement/links.js';
import { AnswerLost, NotShipped, type ChannelAdapter, type Work } from './channel.types.js';

/** Mail's outcomes in the shipping path's words (mail keeps its own, so it needs nothing from here). */
function translated(err: unknown): unknown {
  if (err instanceof NotSent) return new NotShipped(err.message, err.permanent, err.refusal, err.detail);
  if (err instanceof MailAnswerLost) return new AnswerLost(err.message);
  return err;
}

/**
 * `email`: the first adapter. Ships through the transport MAIL_TRANSPORT names; connected on every
 * account. Each mail's thread (its Message-ID and reply token) is recorded with its fence, and every
 * ship of it carries Reply-To and List-Unsubscribe from that.
 */
export const emailAdapter = (config: Config, db: Db): ChannelAdapter => mailAdapter(config, db, 'email');

/**
 * `sequence`: mail too, on the same transport. The card's draft is its first mail; its later steps are
 * shipped by the sequence's own jobs through the same adapter, each under its own fence
 * (src/shipping/sequence-runner.ts). Every step's thread names the sequence, so a reply to any of them stops it.
 */
export const sequenceAdapter = (config: Config, db: Db): ChannelAdapter => mailAdapter(config, db, 'sequence');

function mailAdapter(config: Config, db: Db, kind: 'email' | 'sequence'): ChannelAdapter {
  // Signs with the From domain's DKIM keys (src/mail/dkim.ts).
  const transport = transportFor(config, db);
  // A demo account's mail never reaches a relay or a mail API: it goes to the local transport's directory,
  // whatever MAIL_TRANSPORT is (its fence says `demo`, written by `prepare` from the account).
  const demoTransport =
    config.mail.transport === 'local' ? transport : transportFor({ ...config, mail: { ...config.mail, transport: 'local' } }, db);
  const transportOf = (details: Record<string, unknown>) => (details.demo === true ? demoTransport : transport);
  const m = config.mail;
  const sequenceOf = (cardId: string) => (kind === 'sequence' ? sequenceIdFor(cardId) : null);
  return {
    kind,
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
      const details = d.inReplyTo ? { inReplyTo: d.inReplyTo, references: d.references } : {};
      return { kind, to: d.to, subject: d.subject, body: body ?? d.body, details };
    },
    // Every mail (and sequence step) ships with its links made tracked links, kept on the fence.
    prepare: async (trx, fencing, work) => {
      const thread = await recordThread(trx, config, fencing, work.to ?? '', sequenceOf(fencing.cardId));
      const demo = (await isDemoAccount(trx, fencing.accountId)) ? { demo: true } : {};
      const source = {
        accountId: fencing.accountId,
        channel: 'email',
        sourceType: 'send' as const,
        sourceId: fencing.id,
        cardId: fencing.cardId,
        leadId: thread.leadId ?? null,
      };
      return { details: { ...thread, ...demo }, body: await trackTextLinks(trx, config.baseUrl, source, work.body) };
    },
    async ship(work, key) {
      const inReplyTo = typeof work.details.inReplyTo === 'string' ? work.details.inReplyTo : null;
      const refs = Array.isArray(work.details.references) ? work.details.references.filter((r) => typeof r === 'string') : [];
      const references = inReplyTo ? (refs.length ? refs : [inReplyTo]) : null;
      try {
        const thread = threadHeaders(config, work.details, key, await replyTokenOf(db, config, work.details));
        return await transportOf(work.details).send(
          { to: work.to ?? '', subject: work.subject, text: work.body, inReplyTo, references, ...thread },
          key,
        );
      } catch (err) {
        throw translated(err);
      }
    },
    lookup: (key) => transport.lookup(key),
  };
}
