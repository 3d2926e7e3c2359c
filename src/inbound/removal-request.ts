import { newId } from '../ids.js';
import type { Queryable } from '../db.js';
import type { Thread } from '../mail/threads.repository.js';
import { addCard } from '../review/cards/doors.js';
import type { Outcome } from './inbound.types.js';

/** The review card source of a removal request a person must decide (docs/decisions/inbound-proof.md). */
export const REMOVAL_REQUEST_SOURCE = 'mail_removal_request';

/**
 * Who asked, when a request to be removed (an `unsubscribe`, or a reply the classifier read as one) was
 * written by someone other than the recipient of the send its token or thread header names: mail
 * forwarded inside a company, answered by a colleague. The token proves the message answers our mail,
 * not who wrote it, so such a request opts nobody out by itself. Null when the sender is the recipient
 * (or the message asks nothing of the kind); `(no From address)` when it names no sender.
 */
export function removalByOther(outcome: Pick<Outcome, 'kind' | 'replyKind'>, from: string | null, recipient: string): string | null {
  const asks = outcome.kind === 'unsubscribe' || (outcome.kind === 'reply' && outcome.replyKind === 'unsubscribe');
  if (!asks) return null;
  const sender = from?.trim().toLowerCase() ?? '';
  if (sender && sender === recipient.trim().toLowerCase()) return null;
  return sender || '(no From address)';
}

export interface RemovalRequest {
  thread: Thread;
  requestedBy: string;
  subject: string | null;
  inboundId: string;
}

/**
 * Files a question card for each request: who asked, about whom, and what was left as it was (nobody
 * opted out, the recipient's sequences run on, nothing counted as their reply). A person decides (the
 * block list, the lead), and their answer is kept on the card.
 */
export async function fileRemovalRequests(trx: Queryable, requests: RemovalRequest[]): Promise<void> {
  for (const r of requests) {
    const { accountId, to, leadId, sendId } = r.thread;
    await addCard(trx, {
      id: newId('card'),
      accountId,
      kind: 'question',
      sourceType: REMOVAL_REQUEST_SOURCE,
      title: `${r.requestedBy} asked to be removed, answering mail sent to ${to}`.slice(0, 200),
      summary: `Removal request from ${r.requestedBy} about mail to ${to}`.slice(0, 2_000),
      prompt: (
        `${r.requestedBy} answered the mail we sent to ${to} asking to be removed, but is not ${to}. Nobody was opted out ` +
        `and ${to}'s sequences go on. Who should be removed: ${r.requestedBy}, ${to}, both, or nobody? ` +
        'Add them to the block list, then answer this card.'
      ).slice(0, 2_000),
      payload: { requestedBy: r.requestedBy, about: to, leadId, sendId, inboundId: r.inboundId, subject: r.subject ?? '' },
      leadId,
      fromOutside: true,
      actions: ['answer', 'snooze', 'dismiss'],
      primaryLabel: 'Answer',
    });
  }
}
