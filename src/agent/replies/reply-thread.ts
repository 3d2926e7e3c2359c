import type { OutsideData } from '../core/agent.types.js';
import type { ToolCall } from '../core/brain.js';

/** The mail thread a reply's wake answers: who replied, and the headers a follow-up to them carries. */
export interface ReplyThread {
  from: string;
  /** The reply's own Message-ID (else our mail it answered): the follow-up's In-Reply-To. */
  inReplyTo: string;
  /** The chain so far (our mail, then the reply), for the follow-up's References. */
  references: string[];
  /** False when nothing proved the reply came from `from` (src/inbound/proof.ts): its cards say so. */
  verified: boolean;
}

const str = (o: Record<string, unknown>, k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');

/** The thread of a mail reply's wake (outside data labelled `mail reply`); null for any other input. */
export function replyThreadOf(data: OutsideData | null): ReplyThread | null {
  const c =
    data?.label === 'mail reply' && data.content && typeof data.content === 'object' ? (data.content as Record<string, unknown>) : null;
  if (!c) return null;
  const inReplyTo = str(c, 'replyMessageId') || str(c, 'messageId');
  if (!inReplyTo) return null;
  const references = Array.isArray(c.references) ? c.references.filter((r): r is string => typeof r === 'string') : [];
  return { from: str(c, 'from').toLowerCase(), inReplyTo, references, verified: c.verified !== false };
}

/** What a card answering an unverified reply carries in its payload, whatever the brain wrote there. */
export const unverifiedSenderMarker = (from: string) => ({
  senderVerified: false,
  senderNote:
    `Unverified sender: the message this answers claims to be from ${from}, but it carried no reply address or ` +
    'thread header of ours and no sender authentication, so it may be forged. Check before sending.',
});

/**
 * A mail the agent ships to the person whose reply woke it answers that reply, whichever brain drafted it:
 * a `ship` of an email to the replier without an In-Reply-To of its own gets the thread's. The model is
 * never trusted to copy Message-IDs; what it does set is kept. When nothing proved the reply's sender,
 * the card always carries the unverified-sender marker (`senderVerified: false` and a note), set last so
 * the brain cannot leave it out or overwrite it.
 */
export function threadedCall(data: OutsideData | null, call: ToolCall): ToolCall {
  const thread = call.name === 'ship' && call.args.work === 'email' ? replyThreadOf(data) : null;
  const to = typeof call.args.to === 'string' ? call.args.to.trim().toLowerCase() : '';
  if (!thread || !to || to !== thread.from) return call;
  const details = call.args.details && typeof call.args.details === 'object' ? (call.args.details as Record<string, unknown>) : {};
  const added =
    typeof details.inReplyTo === 'string'
      ? {}
      : { inReplyTo: thread.inReplyTo, ...(thread.references.length ? { references: thread.references } : {}) };
  const marker = thread.verified ? {} : unverifiedSenderMarker(thread.from);
  if (!Object.keys(added).length && !Object.keys(marker).length) return call;
  return { ...call, args: { ...call.args, details: { ...details, ...added, ...marker } } };
}
