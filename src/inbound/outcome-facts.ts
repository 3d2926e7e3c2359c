import type { TurnInput } from '../agent/messages/agent.service.js';
import { threadChain } from '../mail/mail-draft.js';
import type { Thread } from '../mail/threads.repository.js';
import type { Outcome } from './inbound.types.js';

/** Reply text the agent may read when it wakes (outside data), cut to this many characters. */
export const WAKE_TEXT_MAX = 4_000;

/** The outside-data label of a network reply's wake (the offline brain answers it with a network message). */
export const NETWORK_REPLY_LABEL = 'network reply';

/**
 * Who answered on the professional network, as the provider poll found them: the canonical profile URL,
 * the account's lead with a contact at it (null when none), and that contact's mail addresses (the same
 * person's sequences).
 */
export interface NetworkContact {
  accountId: string;
  /** The provider's event id, carried to the wake. */
  eventId: string;
  leadId: string | null;
  profileUrl: string;
  emails: string[];
}

/**
 * One outcome to plan: what it was, the message (or POST, or provider event) it came from, and who it is
 * about — the shipped mail it answers (`thread`), or the network contact who replied (`network`). The
 * channel supplies only these facts; effects.service.ts's plan decides what changes.
 */
export type OutcomeItem = { outcome: Outcome; ref: { id: string; at: number } } & ({ thread: Thread } | { network: NetworkContact });

/** The facts the plan reads, whatever the channel. */
export interface Facts {
  channel: 'email' | 'network';
  accountId: string;
  leadId: string | null;
  /** The contact the outcome is about: the address mail went to, or the profile URL. */
  contact: string;
  /** Whose sequences are this contact's: the contact, and (network) the same person's mail addresses. */
  addresses: string[];
  /** Mail only: the shipped mail it answers (its send, card, Message-ID). */
  thread: Thread | null;
  /** The wake turn a human reply records, in the channel's words. */
  wake(outcome: Outcome, verified: boolean): TurnInput;
  /** Why the contact's sequences stopped, in the channel's words. */
  stopReason: { replied: string; removal: string };
}

export function factsOf(item: OutcomeItem): Facts {
  if ('thread' in item) {
    const t = item.thread;
    return {
      channel: 'email',
      accountId: t.accountId,
      leadId: t.leadId,
      contact: t.to,
      addresses: [t.to],
      thread: t,
      wake: (o, verified) => mailWake(t, o, verified),
      stopReason: { replied: 'the recipient replied', removal: 'the recipient asked to be removed' },
    };
  }
  const n = item.network;
  return {
    channel: 'network',
    accountId: n.accountId,
    leadId: n.leadId,
    contact: n.profileUrl,
    addresses: [n.profileUrl, ...n.emails],
    thread: null,
    wake: (o) => networkWake(n, o),
    stopReason: {
      replied: 'the recipient replied on the professional network',
      removal: 'the recipient asked on the professional network to be removed',
    },
  };
}

/** The wake turn of a mail reply: the reply as outside data, marked when nothing verified its sender. */
function mailWake(thread: Thread, outcome: Outcome, verified: boolean): TurnInput {
  const replyKind = outcome.replyKind ?? 'other';
  const subject = outcome.subject ?? '';
  const content = {
    sendId: thread.sendId,
    leadId: thread.leadId,
    from: thread.to,
    subject,
    replyKind,
    // Our mail's Message-ID names the thread (one wake per thread: src/agent/replies/reply-wakes.ts); a follow-up
    // answers the reply itself (`replyMessageId`) and carries the whole chain (our mail, then the reply).
    messageId: thread.messageId,
    replyMessageId: outcome.messageId ?? null,
    references: threadChain(thread.messageId, outcome.references ?? [], outcome.messageId ?? null),
    text: (outcome.text ?? '').slice(0, WAKE_TEXT_MAX),
    ...(verified ? {} : { verified: false }),
  };
  const text = verified
    ? `${thread.to} replied (${replyKind}) to "${subject}".`
    : `A message claiming to be from ${thread.to} (${replyKind}) about "${subject}". Unverified: it carries no reply address or ` +
      'thread header of ours and no sender authentication, so it may be forged; the lead, its sequences and the block list were ' +
      'left as they were. Let a person decide.';
  return { accountId: thread.accountId, kind: 'wake', origin: 'mail', text, data: { label: 'mail reply', content } };
}

/** The wake turn of a network reply: the reply as outside data (the provider's connection vouches for the sender). */
function networkWake(n: NetworkContact, outcome: Outcome): TurnInput {
  const replyKind = outcome.replyKind ?? 'other';
  const content = {
    eventId: n.eventId,
    leadId: n.leadId,
    from: n.profileUrl,
    replyKind,
    text: (outcome.text ?? '').slice(0, WAKE_TEXT_MAX),
  };
  return {
    accountId: n.accountId,
    kind: 'wake',
    origin: 'network',
    text: `${n.profileUrl} replied on the professional network (${replyKind}).`,
    data: { label: NETWORK_REPLY_LABEL, content },
  };
}
