import { normaliseBlockValue } from '../blocklist/normalise.js';
import type { Trx } from '../db.js';
import { recordContactOutcome } from '../leads/contact-status.js';
import { type LeadMailOutcome, recordLeadMailOutcome } from '../leads/mail-outcome.js';
import { bareAddress } from '../mail/outbound.js';
import type { Fence } from './fence.repository.js';

/**
 * What a send's outcome means for its lead: mail or a network message marks the contact it went to (its
 * address, or its canonical profile URL), and the lead's status follows its contacts' by the one rule table
 * (src/leads/outcome-rules.ts); other work, naming no contact, marks the lead itself by the same table.
 */
export async function recordSendOutcome(trx: Trx, fence: Fence, outcome: LeadMailOutcome, at: number): Promise<void> {
  const leadId = fence.details.leadId;
  if (typeof leadId !== 'string') return;
  const profile = normaliseBlockValue(fence.to);
  const address = fence.to.includes('@') ? bareAddress(fence.to) : profile?.kind === 'network' ? profile.value : null;
  if (address) await recordContactOutcome(trx, { accountId: fence.accountId, leadId, address, outcome }, at);
  else await recordLeadMailOutcome(trx, fence.accountId, leadId, outcome, at);
}
