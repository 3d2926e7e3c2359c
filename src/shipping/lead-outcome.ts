import type { Trx } from '../db.js';
import { recordContactOutcome } from '../leads/contact-status.js';
import { type LeadMailOutcome, recordLeadMailOutcome } from '../leads/mail-outcome.js';
import { bareAddress } from '../mail/outbound.js';
import type { Fence } from './fence.repository.js';

/**
 * What a send's outcome means for its lead: mail marks the contact it went to (the lead's status follows
 * its contacts', src/leads/contact-status.ts); other work, with no address, marks the lead itself.
 */
export async function recordSendOutcome(trx: Trx, fence: Fence, outcome: LeadMailOutcome, at: number): Promise<void> {
  const leadId = fence.details.leadId;
  if (typeof leadId !== 'string') return;
  if (fence.to.includes('@'))
    await recordContactOutcome(trx, { accountId: fence.accountId, leadId, address: bareAddress(fence.to), outcome }, at);
  else await recordLeadMailOutcome(trx, fence.accountId, leadId, outcome, at);
}
