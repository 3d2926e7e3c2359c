import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { AnswerLost, NotShipped, textOf, type ChannelAdapter, type Work } from '../channels/channel.types.js';
import { experimentsRepository } from './experiments.repository.js';

/**
 * `experiment`: starting an experiment the agent proposed (its card, approved by a person, the trust ladder or the
 * account's setting like any other kind of work). Shipping it records every audience member's variant in our own
 * database (experiments.repository.ts `start`), before any of its mail is drafted; the mail itself is email work and
 * waits under the email approval settings (experiments.service.ts drafts it). Starting twice changes nothing.
 * The channel registry knows the kind but not this adapter: the composition roots register it (`registerAdapter`).
 */
export const experimentAdapter = (_config: Config, db: Db): ChannelAdapter => ({
  kind: 'experiment',
  channel: 'email',
  service: 'the experiment runner',
  noun: 'experiment',
  canReship: true,
  needsRecipient: false,
  // Our own database: an answer is quick or the database is down.
  timings: { retryAfterSeconds: 2, reconcileDelayMs: 1_000, reconcileWindowMs: 10 * 60_000, sendTimeoutMs: 10_000 },
  workOf(card): Work {
    return { kind: 'experiment', to: null, subject: card.title, body: '', details: { experimentId: textOf(card.payload.experimentId) } };
  },
  async prepare(_trx, fencing) {
    return { details: { accountId: fencing.accountId } };
  },
  async ship(work) {
    const accountId = textOf(work.details.accountId);
    const id = textOf(work.details.experimentId);
    if (!accountId || !id) throw new NotShipped('the card names no experiment', true);
    let started: boolean;
    try {
      started = await db.transaction((trx) => experimentsRepository(trx).start(accountId, id, Date.now()));
    } catch (err) {
      // The commit may have landed: lookup reads the experiment's status.
      throw new AnswerLost((err as Error).message);
    }
    if (!started) throw new NotShipped('the experiment was dismissed or has ended', true);
    return { providerId: id };
  },
  async lookup(_key, fence) {
    const id = textOf(fence.details.experimentId);
    if (!id) return { state: 'unknown' };
    const e = await experimentsRepository(db).get(fence.accountId, id);
    return e && e.status !== 'proposed' && e.startedAt !== null ? { state: 'sent', providerId: id } : { state: 'not_found' };
  },
});
