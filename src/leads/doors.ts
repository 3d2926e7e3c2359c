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
