import type { MatchedBy } from './match.js';
import { alignsWith, domainOf, type SenderAuth } from './sender-auth.js';

/**
 * What shows that a received message answers mail of ours, so it may opt a lead out, bounce it, stop its
 * sequences or block its address: our reply token (reply+/unsubscribe+/bounces+, also inside a report), one of our
 * Message-IDs (In-Reply-To, References, a report's original), or the authentication of the sender's
 * domain: a trusted provider's Authentication-Results, or for mail received over our SMTP listener our
 * own DKIM/SPF/DMARC check (smtp-auth.ts). A message matched by its sender address alone proves none of these on its own: its
 * `From` (or a report's failed recipient) is whatever the sender wrote.
 */
export type Proof = 'token' | 'message-id' | 'sender-authentication';

const BY_MATCH: Record<MatchedBy, Proof | null> = {
  'reply-address': 'token',
  'unsubscribe-address': 'token',
  'bounce-address': 'token',
  'original-address': 'token',
  'in-reply-to': 'message-id',
  references: 'message-id',
  'original-message-id': 'message-id',
  sender: null,
};

/**
 * The proof a matched message carries, or null. For a match by address, the authenticated domain must
 * cover the address matched as well as the From domain: a reply's sender is its From; a report's failed
 * recipient must be at the domain whose mail server (authenticated) reports it, so a report signed by
 * any other domain bounces nobody.
 */
export function proofOf(matchedBy: MatchedBy, matchedAddress: string | null, auth: SenderAuth | null): Proof | null {
  const byMatch = BY_MATCH[matchedBy];
  if (byMatch) return byMatch;
  return auth?.pass && alignsWith(domainOf(matchedAddress), auth.domain) ? 'sender-authentication' : null;
}
