import type { ContactStatus, LeadStatus } from './leads.types.js';

/**
 * What a channel learned of a lead's contact: mail or a network message reached it (`contacted`, when a
 * send settles), it replied (by mail or on the network), its address bounced, or it opted out.
 */
export type OutcomeStatus = 'contacted' | 'replied' | 'bounced' | 'unsubscribed';

/**
 * The one rule table for a lead's and a contact's status, used by every channel that writes them (mail
 * sends and refusals, bounces, replies and opt-outs, network messages and replies): for each outcome, the
 * statuses it may replace.
 *
 * - `contact`: the contact's own status. `contacted` only moves a contact nobody wrote to; a reply stands
 *   against a later bounce; an unsubscribe against a later reply (and a reply never undoes it).
 * - `lead`: the lead's status. The lead then takes the status its contacts give (`LEAD_PRECEDENCE`,
 *   contact-status.ts), so a colleague still reachable keeps a company `contacted` after one address
 *   bounced or left. Never `converted`: a conversion is not undone by a channel.
 *
 * `declined` is a decision (the agent's or a person's: this company said no), not a contact's status. Only
 * the contact's own new answer moves it: a reply (`replied`) or an opt-out that leaves nobody there to write
 * to (`unsubscribed`). A send settling, a bounce, or a colleague's older reply never does (`leadMayTake`).
 *
 * Where nothing names the contact (work with no address), the lead is its own only contact: an outcome
 * must be allowed by both columns, the lead's status read as a contact's (`asContactStatus`).
 */
export const OUTCOME_RULES: Record<OutcomeStatus, { contact: readonly ContactStatus[]; lead: readonly LeadStatus[] }> = {
  contacted: {
    contact: ['new'],
    lead: ['new', 'researched', 'drafted', 'contacted', 'bounced', 'unsubscribed'],
  },
  replied: {
    contact: ['new', 'contacted', 'replied', 'bounced'],
    lead: ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'unsubscribed', 'declined'],
  },
  bounced: {
    contact: ['new', 'contacted'],
    lead: ['new', 'researched', 'drafted', 'contacted', 'bounced'],
  },
  unsubscribed: {
    contact: ['new', 'contacted', 'replied', 'bounced', 'unsubscribed'],
    lead: ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'unsubscribed', 'declined'],
  },
};

/** Lead statuses that record a decision rather than what a channel learned: only the outcome's own status replaces them. */
const DECISIONS: readonly string[] = ['declined', 'converted'];

/**
 * Whether an `outcome` may move a lead at `current` to `next` (the status its contacts now give): the
 * table's `lead` column, and a decision is replaced only by the outcome's own status.
 */
export function leadMayTake(current: string, outcome: OutcomeStatus, next: string): boolean {
  if (!(OUTCOME_RULES[outcome].lead as readonly string[]).includes(current)) return false;
  return !DECISIONS.includes(current) || next === outcome;
}

/** A lead's status read as a contact's, for a lead that is its own only contact; null for a decision. */
function asContactStatus(s: LeadStatus): ContactStatus | null {
  if (s === 'researched' || s === 'drafted') return 'new';
  return DECISIONS.includes(s) ? null : (s as ContactStatus);
}

/** The lead statuses an outcome on the lead itself (no contact named) may replace: both columns of the table. */
export function leadOnlyReplaces(outcome: OutcomeStatus): LeadStatus[] {
  const rule = OUTCOME_RULES[outcome];
  return rule.lead.filter((s) => {
    const c = asContactStatus(s);
    return c === null || rule.contact.includes(c);
  });
}
