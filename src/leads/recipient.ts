import type { Queryable } from '../db.js';

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
