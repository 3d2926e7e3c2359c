/**
 * Whom an experiment may reach: the leads' contacts (read through the leads' door, src/leads/doors.ts) that no
 * running experiment holds (this area's assignments).
 */
import type { Queryable } from '../db.js';
import { LEAD_CONTACTS_SQL } from '../leads/doors.js';

/** Contacts never mailed (status `new`), with an address, in no other open experiment: whom an experiment may reach. */
export async function openAudience(q: Queryable, accountId: string, limit: number): Promise<{ leadId: string; email: string }[]> {
  const { rows } = (await q.raw(
    `SELECT DISTINCT ON (lower(c.email)) c.lead_id, lower(c.email) AS email FROM ${LEAD_CONTACTS_SQL} c
      WHERE c.account_id = ? AND c.email IS NOT NULL AND coalesce(c.status, 'new') = 'new'
        AND NOT EXISTS (SELECT 1 FROM experiment_assignments a JOIN experiments e
                          ON e.account_id = a.account_id AND e.id = a.experiment_id AND e.status = 'running'
                         WHERE a.account_id = c.account_id AND a.contact = lower(c.email))
      ORDER BY lower(c.email), c.seq LIMIT ?`,
    [accountId, limit],
  )) as { rows: { lead_id: string; email: string }[] };
  return rows.map((r) => ({ leadId: r.lead_id, email: r.email }));
}
