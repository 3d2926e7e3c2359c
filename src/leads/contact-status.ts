import type { Queryable } from '../db.js';
import { newId } from '../ids.js';
import type { ContactStatus } from './leads.types.js';
import type { LeadMailOutcome } from './mail-outcome.js';
import { leadMayTake, OUTCOME_RULES } from './outcome-rules.js';
import { replyKindMayReplace } from './reply-strength.js';

/**
 * The lead's status from its contacts', first match wins (docs/decisions/mail-leads-and-threads.md):
 * a contact `replied` (the strongest reply's kind, the latest of equal strength: reply-strength.ts) →
 * `contacted` (someone still reachable) → `unsubscribed` → `bounced`. So a colleague's unsubscribe or bounce
 * never hides a human reply, and a company is only `unsubscribed` or `bounced` when nobody there can still
 * be written to. Null: no contact has a mail status.
 */
export const LEAD_PRECEDENCE: ContactStatus[] = ['replied', 'contacted', 'unsubscribed', 'bounced'];

export interface ContactOutcome {
  accountId: string;
  leadId: string;
  /** Who the channel reached (the contact): the address mail went to (any case), or the canonical profile URL. */
  address: string;
  outcome: LeadMailOutcome;
}

/**
 * Records what a channel learned of one contact (the lead's contact at `address`: an email address or a
 * profile URL) and sets the lead's status from all its contacts' by `LEAD_PRECEDENCE`, as the one rule
 * table allows (outcome-rules.ts: `converted` never changes; `declined` only to the outcome's own status,
 * by the contact's reply or an opt-out that leaves nobody to write to); one `replied` that no contact's
 * reply explains (the agent recorded it, or it predates contact statuses) only by another reply. Answers,
 * per item, whether the lead's status, reply kind or decline reason changed. Items for the same lead are
 * applied in their order, in the caller's transaction.
 */
export async function recordContactOutcomes(q: Queryable, items: ContactOutcome[], at: number): Promise<boolean[]> {
  const out: boolean[] = items.map(() => false);
  // Leads are locked in one order (account, lead), so two batches touching the same leads never deadlock.
  const order = items.map((_, n) => n).sort((a, b) => key(items[a]!).localeCompare(key(items[b]!)) || a - b);
  for (const n of order) out[n] = await recordOne(q, items[n]!, at);
  return out;
}

const key = (i: ContactOutcome) => `${i.accountId} ${i.leadId}`;

export const recordContactOutcome = async (q: Queryable, item: ContactOutcome, at: number) =>
  (await recordContactOutcomes(q, [item], at))[0]!;

interface LeadState {
  status: string;
  reply_kind: string | null;
  decline_reason: string | null;
}

async function recordOne(q: Queryable, { accountId, leadId, address, outcome: o }: ContactOutcome, at: number): Promise<boolean> {
  const lead: LeadState | undefined = await q('leads')
    .where({ account_id: accountId, id: leadId })
    .forUpdate()
    .first('status', 'reply_kind', 'decline_reason');
  if (!lead) return false;
  const patch: Record<string, unknown> = { status: o.status, status_at: at };
  if (o.replyKind !== undefined) patch.reply_kind = o.replyKind;
  if (o.declineReason !== undefined) patch.decline_reason = o.declineReason;
  const key = contactKey(address);
  const contact = () => {
    const c = q('lead_contacts').where({ lead_id: leadId, account_id: accountId });
    return 'email' in key ? c.andWhereRaw('lower(email) = ?', [key.email]) : c.andWhere(key);
  };
  if (o.status === 'replied') {
    // A later, weaker reply (an "other" after an "interested") keeps the stronger kind and its reason (reply-strength.ts).
    const now: { status: string; reply_kind: string | null } | undefined = await contact().first('status', 'reply_kind');
    if (now?.status === 'replied' && !replyKindMayReplace(now.reply_kind, o.replyKind)) {
      delete patch.reply_kind;
      delete patch.decline_reason;
    }
  }
  const updated = await contact().whereIn('status', OUTCOME_RULES[o.status].contact).update(patch);
  // An address the lead does not list (written down before contacts kept a status): it becomes one.
  if (!updated && !(await contact().first('id'))) {
    await q('lead_contacts').insert({ id: newId('lc'), lead_id: leadId, account_id: accountId, ...key, created_at: at, ...patch });
  }
  const next = await leadStatusFromContacts(q, leadId);
  if (!next || !leadMayTake(lead.status, o.status, next.status)) return false;
  // A reply the lead records but no contact does (recorded by the agent, or before contacts kept a status) stands.
  if (lead.status === 'replied' && next.status !== 'replied' && !(await contactAnswered(q, leadId))) return false;
  const wanted: LeadState = {
    status: next.status,
    // A status nobody answered in keeps what the lead said before (a reply's kind outlives a colleague's bounce).
    reply_kind: next.replyKind ?? lead.reply_kind,
    decline_reason: next.replyKind ? next.declineReason : lead.decline_reason,
  };
  if (wanted.status === lead.status && wanted.reply_kind === lead.reply_kind && wanted.decline_reason === lead.decline_reason) {
    return false;
  }
  await q('leads')
    .where({ account_id: accountId, id: leadId })
    .update({ ...wanted, updated_at: at });
  return true;
}

/** How a contact is found: by its email (any case) or, for a profile URL (no `@`), by that URL as stored. */
const contactKey = (address: string): { email: string } | { profile_url: string } => {
  const a = address.trim();
  return a.includes('@') ? { email: a.toLowerCase() } : { profile_url: a };
};

/** Whether a contact of the lead replied (now `replied`, or a reply's kind kept after it left). */
async function contactAnswered(q: Queryable, leadId: string): Promise<boolean> {
  const row = await q('lead_contacts')
    .where({ lead_id: leadId })
    .andWhere((b) => b.where({ status: 'replied' }).orWhereNotNull('reply_kind'))
    .first('id');
  return Boolean(row);
}

/** The lead's status by `LEAD_PRECEDENCE`, with the reply kind of the contact that decided it (the latest of that status). */
export async function leadStatusFromContacts(
  q: Queryable,
  leadId: string,
): Promise<{ status: ContactStatus; replyKind: string | null; declineReason: string | null } | null> {
  const rows: { status: ContactStatus; reply_kind: string | null; decline_reason: string | null }[] = await q('lead_contacts')
    .where({ lead_id: leadId })
    .whereIn('status', LEAD_PRECEDENCE)
    .orderBy([
      { column: 'status_at', order: 'desc', nulls: 'last' },
      { column: 'seq', order: 'desc' },
    ])
    .select('status', 'reply_kind', 'decline_reason');
  for (const status of LEAD_PRECEDENCE) {
    // The latest of that status; among replies, the strongest kind (the latest of equal strength).
    const hit = rows
      .filter((r) => r.status === status)
      .reduce<(typeof rows)[number] | undefined>(
        (best, r) => (!best || (status === 'replied' && !replyKindMayReplace(r.reply_kind, best.reply_kind)) ? r : best),
        undefined,
      );
    if (!hit) continue;
    const replyKind = status === 'replied' || status === 'unsubscribed' ? hit.reply_kind : null;
    return { status, replyKind, declineReason: replyKind ? hit.decline_reason : null };
  }
  return null;
}
