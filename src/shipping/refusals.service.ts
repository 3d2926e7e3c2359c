import { addToBlocklist } from '../blocklist/blocklist.service.js';
import type { Db, Queryable, Trx } from '../db.js';
import { channelOf } from '../channels/registry.js';
import { metrics } from '../metrics/registry.js';
import { recordChannelEvent } from '../results/channel-events.js';
import { cardsRepository, type CardChanges } from '../review/cards/cards.repository.js';
import { fencesRepository, type Fence } from './fence.repository.js';
import { recordSendOutcome } from './lead-outcome.js';
import { stopSequences } from './sequence-state.js';

/** The mail relay's answer about one recipient, at RCPT or DATA (src/mail/smtp.transport.ts). */
export interface RelayRefusal {
  code: number;
  reply: string;
}

/**
 * What a relay's refusal of a fenced send became: `bounced` (a 5xx, or the soft failure that reached
 * MAIL_SOFT_FAILURES_BEFORE_BLOCK: the address is blocked and the card settled), `deferred` (a 4xx under
 * that limit: the card is pending again, like any send the service did not take), or `settled` (the fence
 * had already been settled by another path; nothing changed).
 */
export type RefusalOutcome = { kind: 'bounced'; reason: string } | { kind: 'deferred'; failures: number } | { kind: 'settled' };

/** Why a sequence of a bounced address stops (the same words as a bounce that comes back as a DSN). */
export const BOUNCED_STOP = 'the address bounced';

const addressKey = (to: string) => to.trim().toLowerCase();

/**
 * Settles a send the relay refused at RCPT or DATA, in one transaction with the fence's own move to
 * `not_sent` (so a retried write, or reconciliation racing it, applies it once):
 * - 5xx: a hard bounce. The address goes on the block list (source `agent`, the relay's words as the
 *   reason; a person may remove it), `email.bounce` is counted under the send (the refId a DSN for the
 *   same send would use, so both count once), the lead is `bounced`, every active sequence to the address
 *   stops, and the card is settled: `resolved` with `resolution.bounced` (no verbs, label "Bounced"), never
 *   sendable again. A sequence's later step leaves its card as it is (its sequence is marked stopped).
 * - 4xx: a soft failure, counted per address in a row; the card goes back to `pending` with `cardChanges`.
 *   The one that reaches `softLimit` is a hard bounce as above.
 */
export async function settleRefusal(
  db: Db,
  fence: Fence,
  refusal: RelayRefusal,
  o: { softLimit: number; cardChanges?: CardChanges | undefined },
): Promise<RefusalOutcome> {
  return db.transaction(async (trx): Promise<RefusalOutcome> => {
    const at = Date.now();
    const voided = await fencesRepository(trx).transition(fence.accountId, fence.id, ['sending', 'pending', 'unknown'], {
      status: 'not_sent',
      lastError: refusal.reply,
      settledAt: at,
    });
    if (!voided) return { kind: 'settled' };
    metrics.sends.inc({ channel: channelOf(fence.kindOfWork), outcome: 'refused' });
    if (refusal.code < 500) {
      const failures = await countSoftFailure(trx, fence, refusal.reply, at);
      if (failures < o.softLimit) {
        if (fence.step === 0) {
          await cardsRepository(trx).transition(
            fence.accountId,
            fence.cardId,
            { statuses: ['sending'] },
            { ...o.cardChanges, status: 'pending' },
          );
        }
        return { kind: 'deferred', failures };
      }
      const reason = `the mail relay deferred it ${failures} times in a row; last: ${refusal.reply}`;
      await hardBounce(trx, fence, reason, at);
      return { kind: 'bounced', reason };
    }
    await hardBounce(trx, fence, refusal.reply, at);
    return { kind: 'bounced', reason: refusal.reply };
  });
}

async function countSoftFailure(trx: Trx, fence: Fence, reply: string, at: number): Promise<number> {
  const { rows } = await trx.raw<{ rows: { failures: number }[] }>(
    `INSERT INTO mail_soft_failures (account_id, address, failures, last_reply, updated_at) VALUES (?, ?, 1, ?, ?)
     ON CONFLICT (account_id, address) DO UPDATE
       SET failures = mail_soft_failures.failures + 1, last_reply = EXCLUDED.last_reply, updated_at = EXCLUDED.updated_at
     RETURNING failures`,
    [fence.accountId, addressKey(fence.to), reply, at],
  );
  return rows[0]!.failures;
}

/** A send the relay took: the address's soft failures in a row start again from nothing. */
export async function clearSoftFailures(q: Queryable, accountId: string, to: string): Promise<void> {
  if (to.includes('@'))
    await q('mail_soft_failures')
      .where({ account_id: accountId, address: addressKey(to) })
      .del();
}

async function hardBounce(trx: Trx, fence: Fence, reason: string, at: number): Promise<void> {
  const { accountId } = fence;
  await addToBlocklist(trx, accountId, [{ value: fence.to, reason: reason.slice(0, 500) }], 'agent', null);
  await clearSoftFailures(trx, accountId, fence.to);
  await recordChannelEvent(trx, accountId, { channel: 'email', type: 'bounce', at, refId: `bounce-${fence.id}` });
  await recordSendOutcome(trx, fence, { status: 'bounced' }, at);
  await stopSequences(trx, accountId, { to: fence.to }, BOUNCED_STOP, at);
  if (fence.step !== 0) return;
  await cardsRepository(trx).transition(
    accountId,
    fence.cardId,
    { statuses: ['sending'] },
    {
      status: 'resolved',
      resolvedAt: at,
      autoResolveAt: null,
      resolution: { action: 'send', by: fence.decidedBy, at, sendId: fence.id, to: fence.to, bounced: true, refusal: reason },
    },
  );
}

/** A bounce the relay reported after it had taken the mail: a delivery report to the send's bounces+ address. */
export interface LateBounce {
  accountId: string;
  cardId: string;
  sendId: string;
  /** The sequence step the bounced mail was (0: the card's own mail). */
  step: number;
  reason: string;
}

/**
 * Says on the card that its mail bounced after the relay took it (a DSN, src/inbound/effects.service.ts),
 * as a refusal at RCPT does: `resolution.bounced` with the report's words, label "Bounced", no verbs. The
 * card stays `sent` (the mail did leave, and what counts sent mail still counts it); the block list, the
 * lead, the count and the sequences are the DSN's own effects. A later step's bounce leaves the card as it is.
 */
export async function markLateBounces(trx: Queryable, bounces: LateBounce[], at: number): Promise<void> {
  const cards = cardsRepository(trx);
  for (const b of bounces) {
    if (b.step !== 0) continue;
    const card = await cards.find(b.accountId, b.cardId);
    if (card?.status !== 'sent') continue;
    const resolution = { ...(card.resolution as Record<string, unknown>), bounced: true, bounce: b.reason, bouncedAt: at };
    await cards.transition(b.accountId, b.cardId, { statuses: ['sent'] }, { status: 'sent', resolution });
  }
}
