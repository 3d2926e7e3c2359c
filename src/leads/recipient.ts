import { normaliseDomain } from '../blocklist/normalise.js';
import type { Queryable } from '../db.js';
import { upsertLead } from './leads.service.js';

/**
 * The account's lead with a contact at this address (case-insensitive), or null. Where several leads
 * list it, the contact added last wins: the lead the agent most recently wrote it down for.
 */
export async function leadForRecipient(q: Queryable, accountId: string, address: string): Promise<string | null> {
  const row: { lead_id: string } | undefined = await q('lead_contacts')
    .select('lead_id')
    .where({ account_id: accountId })
    .whereNotNull('email')
    .andWhereRaw('lower(email) = ?', [address.trim().toLowerCase()])
    .orderBy('seq', 'desc')
    .first();
  return row?.lead_id ?? null;
}

/** The account's lead with a contact at this profile URL (stored in the block list's canonical form), newest contact first. */
export async function leadForProfile(q: Queryable, accountId: string, profileUrl: string): Promise<string | null> {
  const row: { lead_id: string } | undefined = await q('lead_contacts')
    .select('lead_id')
    .where({ account_id: accountId, profile_url: profileUrl })
    .orderBy('seq', 'desc')
    .first();
  return row?.lead_id ?? null;
}

/** The email addresses of the account's contacts with this profile URL (the same person's mail), lower-cased. */
export async function emailsForProfile(q: Queryable, accountId: string, profileUrl: string): Promise<string[]> {
  const rows = (await q('lead_contacts')
    .distinct(q.raw('lower(email) as email'))
    .where({ account_id: accountId, profile_url: profileUrl })
    .whereNotNull('email')) as { email: string }[];
  return rows.map((r) => r.email);
}

/**
 * The lead a mail to `address` reaches, made when none lists it: the account's lead for the address's
 * domain gains the contact, or a new lead for that domain (source `agent`) is made with it, so a reply,
 * bounce or unsubscribe always has a lead to show in. Null only when the address has no usable domain.
 */
export async function leadForMail(q: Queryable, accountId: string, address: string): Promise<string | null> {
  const known = await leadForRecipient(q, accountId, address);
  if (known) return known;
  const email = address.trim().toLowerCase();
  const domain = normaliseDomain(email.split('@')[1] ?? '');
  if (!domain || !email.includes('@')) return null;
  const { id, created } = await upsertLead(q, accountId, { domain, contacts: [{ email }] });
  if (created) await q('leads').where({ account_id: accountId, id }).update({ source: 'agent' });
  return id;
}
