import type { Queryable } from '../db.js';

/**
 * The account's first lead (by creation) created or researched between `from` and `to` (epoch ms), or undefined:
 * what a turn that ran then recorded (webhooks' delivery outcome; an account runs one turn at a time).
 */
export const leadTouchedBetween = (q: Queryable, accountId: string, from: number, to: number) =>
  q('leads as l')
    .where('l.account_id', accountId)
    .andWhere((w) =>
      w
        .whereBetween('l.created_at', [from, to])
        .orWhereExists(q('lead_research as r').whereRaw('r.lead_id = l.id').whereBetween('r.updated_at', [from, to])),
    )
    .orderBy('l.created_at')
    .first<{ id: string; domain: string } | undefined>('l.id', 'l.domain');

/**
 * SQL text for a statement of another area that must read contacts inside it (an experiment's open audience): the
 * contacts as a table of (account_id, lead_id, email, status, seq), a subquery Postgres folds into the statement.
 */
export const LEAD_CONTACTS_SQL = '(SELECT account_id, lead_id, email, status, seq FROM lead_contacts)';

/** The status of the account's contact at `address` (lowercased) when it is past `new` (mailed, replied, unsubscribed…), or null. */
export async function contactStatusPastNew(q: Queryable, accountId: string, address: string): Promise<string | null> {
  const row = (await q('lead_contacts')
    .where({ account_id: accountId })
    .whereRaw('lower(email) = ?', [address])
    .whereNot('status', 'new')
    .first('status')) as { status: string } | undefined;
  return row?.status ?? null;
}
