import type { ReplyKind } from '../leads/leads.types.js';

/** What a received message is, once matched to a send (docs/decisions/mail-loop.md "The mail loop"). */
export const INBOUND_KINDS = ['reply', 'auto_reply', 'bounce', 'unsubscribe', 'complaint'] as const;
export type InboundKind = (typeof INBOUND_KINDS)[number];

/** Where a received message is in its life: stored → applied, or kept with a reason. */
export const INBOUND_STATUSES = ['received', 'applied', 'unplaced', 'malformed', 'duplicate'] as const;
export type InboundStatus = (typeof INBOUND_STATUSES)[number];

/** A delivery status notification's verdict (RFC 3464): `hard` is permanent (5.x.x), `soft` transient (4.x.x). */
export interface BounceInfo {
  type: 'hard' | 'soft';
  /** The failed recipient, lowercased bare address (Final-Recipient / Original-Recipient). */
  recipient: string | null;
  /** The enhanced status code, e.g. `5.1.1`. */
  status: string | null;
  /** The remote server's words (Diagnostic-Code), cut to 500 characters. */
  diagnostic: string | null;
}

/** What classification made of a matched message: the one input of `applyOutcome`. */
export interface Outcome {
  kind: InboundKind;
  /** Human replies only: what the person meant (never their text). */
  replyKind?: ReplyKind | null;
  /** Human replies that decline: a short reason in our words (`not_interested`, `wrong_person`, …). */
  declineReason?: string | null;
  bounce?: BounceInfo | null;
  /** Human replies: the message text the agent may read as outside data (rule 8) when it wakes. */
  text?: string | null;
  subject?: string | null;
  /** Human replies: the reply's own Message-ID and References (a follow-up threads under it). */
  messageId?: string | null;
  references?: string[];
  /**
   * Nothing shows the message answers our mail (no token or Message-ID of ours, no trusted sender
   * authentication; src/inbound/proof.ts): a human reply only wakes the agent for a person to look at.
   */
  unverified?: boolean;
  /**
   * A request to be removed (an `unsubscribe` kind or reply) whose sender is not the send's recipient (a
   * colleague the mail was forwarded to): nobody is opted out; a person is asked (src/inbound/removal-request.ts).
   */
  requestedBy?: string | null;
}
