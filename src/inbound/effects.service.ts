import { dispatchTurn, recordTurn, type AgentDeps, type Recorded } from '../agent/agent.service.js';
import { addToBlocklist } from '../blocklist/blocklist.service.js';
import { recordOptOut } from '../blocklist/opt-out.js';
import type { Config } from '../config.js';
import type { Queryable } from '../db.js';
import { recordLeadMailOutcome } from '../leads/mail-outcome.js';
import type { Thread } from '../mail/threads.repository.js';
import { stopSequences } from '../review/sequences.service.js';
import { recordChannelEvent } from '../results/channel-events.js';
import type { Outcome } from './inbound.types.js';

/** What applying an outcome did, for the caller's record and for `afterApplied`. */
export interface Applied {
  /** The lead whose status changed (null when none did). */
  leadChanged: string | null;
  /** Active sequences of this recipient that stopped. */
  sequencesStopped: number;
  /** True when the address went on the block list (opt-out, or a hard bounce). */
  blocked: boolean;
  /** The wake turn recorded for a human reply; `afterApplied` starts it after commit. */
  wake: Recorded | null;
}

/** Reply text the agent may read when it wakes (outside data, rule 8), cut to this many characters. */
export const WAKE_TEXT_MAX = 4_000;

/** Stops the recipient's running sequences (of this lead, or to this address): their later steps ship nothing. */
const stopFor = (trx: Queryable, thread: Thread, reason: string, at: number) =>
  stopSequences(trx, thread.accountId, { to: thread.to, leadId: thread.leadId }, reason, at);

/**
 * Applies what came back for one shipped mail, inside the caller's transaction (with the inbound row's
 * own update, so a retried job applies it once). Counts are keyed by the send (`refId`), so a second
 * reply or a repeated one-click POST counts once in `/results`:
 * - reply: lead `replied` with its kind (an `unsubscribe` kind is an opt-out as well), `email.reply`
 *   (and `positive_reply` when interested), the recipient's sequences stop, the agent wakes;
 * - auto_reply: nothing changes (an out-of-office is not an answer; the sequence goes on);
 * - bounce: hard → lead `bounced`, the address blocked (source `agent`, removable), `email.bounce`,
 *   sequences stop; soft → nothing changes (the MTA retries; a later hard bounce settles it);
 * - unsubscribe, complaint: the address on the block list for good (`opt_out_reply`), lead
 *   `unsubscribed`, `email.opt_out`, sequences stop.
 */
export async function applyOutcome(
  trx: Queryable,
  config: Config,
  thread: Thread,
  outcome: Outcome,
  ref: { id: string; at: number },
): Promise<Applied> {
  const { accountId, leadId } = thread;
  const at = ref.at;
  const applied: Applied = { leadChanged: null, sequencesStopped: 0, blocked: false, wake: null };
  const lead = async (o: Parameters<typeof recordLeadMailOutcome>[3]) => {
    if (leadId && (await recordLeadMailOutcome(trx, accountId, leadId, o, at))) applied.leadChanged = leadId;
  };
  const optOut = async () => {
    await recordOptOut(trx, accountId, { address: thread.to, at, refId: `unsubscribe-${thread.sendId}` });
    applied.blocked = true;
  };

  switch (outcome.kind) {
    case 'auto_reply':
      return applied;
    case 'bounce': {
      if (outcome.bounce?.type !== 'hard') return applied;
      const why = [outcome.bounce.status, outcome.bounce.diagnostic].filter(Boolean).join(' ');
      await addToBlocklist(
        trx,
        accountId,
        [{ value: thread.to, reason: `hard bounce${why ? `: ${why}` : ''}`.slice(0, 500) }],
        'agent',
        null,
      );
      applied.blocked = true;
      await lead({ status: 'bounced' });
      await recordChannelEvent(trx, accountId, { channel: 'email', type: 'bounce', at, refId: `bounce-${thread.sendId}` });
      applied.sequencesStopped = await stopFor(trx, thread, 'the address bounced', at);
      return applied;
    }
    case 'unsubscribe':
    case 'complaint': {
      await optOut();
      if (outcome.kind === 'complaint') {
        await recordChannelEvent(trx, accountId, { channel: 'email', type: 'complaint', at, refId: `complaint-${thread.sendId}` });
      }
      await lead({ status: 'unsubscribed' });
      const reason = outcome.kind === 'complaint' ? 'the recipient reported it as spam' : 'the recipient unsubscribed';
      applied.sequencesStopped = await stopFor(trx, thread, reason, at);
      return applied;
    }
    case 'reply': {
      const replyKind = outcome.replyKind ?? 'other';
      await recordChannelEvent(trx, accountId, { channel: 'email', type: 'reply', at, refId: `reply-${thread.sendId}` });
      if (replyKind === 'interested') {
        await recordChannelEvent(trx, accountId, { channel: 'email', type: 'positive_reply', at, refId: `reply-${thread.sendId}` });
      }
      if (replyKind === 'unsubscribe') {
        await optOut();
        await lead({ status: 'unsubscribed', replyKind, declineReason: outcome.declineReason ?? 'asked to be removed' });
        applied.sequencesStopped = await stopFor(trx, thread, 'the recipient asked to be removed', at);
        return applied;
      }
      await lead({ status: 'replied', replyKind, declineReason: outcome.declineReason ?? null });
      applied.sequencesStopped = await stopFor(trx, thread, 'the recipient replied', at);
      applied.wake = await recordTurn(trx, config, {
        accountId,
        kind: 'wake',
        origin: 'mail',
        text: `${thread.to} replied (${replyKind}) to "${outcome.subject ?? ''}".`,
        data: {
          label: 'mail reply',
          content: {
            sendId: thread.sendId,
            leadId,
            from: thread.to,
            subject: outcome.subject ?? '',
            replyKind,
            messageId: thread.messageId,
            text: (outcome.text ?? '').slice(0, WAKE_TEXT_MAX),
          },
        },
      });
      return applied;
    }
  }
}

/** After commit: starts the wake turn a human reply recorded (a failed enqueue is repaired by the sweeper). */
export async function afterApplied(deps: AgentDeps, applied: Applied): Promise<void> {
  if (applied.wake) await dispatchTurn(deps, applied.wake);
}
