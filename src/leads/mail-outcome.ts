import type { Queryable } from '../db.js';
import type { ReplyKind } from './leads.types.js';
import { kindsStrongerThan } from './reply-strength.js';

/**
 * What the mail loop learned of a lead: mail reached it (`contacted`, when a send settles),
 * it replied, its address bounced, or it unsubscribed.
 */
export interface LeadMailOutcome {
  status: 'contacted' | 'replied' | 'bounced' | 'unsubscribed';
  replyKind?: ReplyKind | null;
  declineReason?: string | null;
}

/**
 * The statuses each outcome may replace. A conversion is never undone by mail; an unsubscribe stands
 * against a later reply; a bounce only changes a lead nobody has heard from (a reply proves the address
 * worked, and a bounce of another contact must not hide it).
 */
const REPLACES: Record<LeadMailOutcome['status'], string[]> = {
  // Only forward: a lead we had not written to yet; never one that answered, bounced or left.
  contacted: ['new', 'researched', 'drafted'],
  replied: ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'declined'],
  bounced: ['new', 'researched', 'drafted', 'contacted'],
  unsubscribed: ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'declined', 'unsubscribed'],
};

/**
 * Records a mail outcome on the account's lead in one conditional update. `replyKind` and
 * `declineReason` are written only when given (a bounce leaves an earlier reply's kind). Answers whether
 * the lead changed (false: not the account's lead, or its status outranks the outcome).
 */
export async function recordLeadMailOutcome(
  q: Queryable,
  accountId: string,
  leadId: string,
  o: LeadMailOutcome,
  at: number,
): Promise<boolean> {
  return (await recordLeadMailOutcomes(q, [{ accountId, leadId, outcome: o }], at))[0]!;
}

/**
 * `recordLeadMailOutcome` for many leads in one statement; answers, per item, whether its lead changed.
 * Outcomes for the same lead are applied one after another (the later one sees the earlier one's status).
 */
export async function recordLeadMailOutcomes(
  q: Queryable,
  items: { accountId: string; leadId: string; outcome: LeadMailOutcome }[],
  at: number,
): Promise<boolean[]> {
  if (!items.length) return [];
  if (new Set(items.map((i) => `${i.accountId} ${i.leadId}`)).size < items.length) {
    const out: boolean[] = [];
    for (const i of items) out.push((await recordLeadMailOutcomes(q, [i], at))[0]!);
    return out;
  }
  const rows = items.map(({ accountId, leadId, outcome: o }) => [
    accountId,
    leadId,
    o.status,
    o.replyKind !== undefined,
    o.replyKind ?? null,
    o.declineReason !== undefined,
    o.declineReason ?? null,
    `{${REPLACES[o.status].join(',')}}`,
    // A reply never overwrites a stronger kind a replied lead already has (reply-strength.ts).
    `{${o.status === 'replied' ? kindsStrongerThan(o.replyKind).join(',') : ''}}`,
  ]);
  const tuple = '(?::text, ?::text, ?::text, ?::boolean, ?::text, ?::boolean, ?::text, ?::text[], ?::text[])';
  const { rows: changed } = await q.raw<{ rows: { id: string; account_id: string }[] }>(
    `UPDATE leads AS l SET status = v.status, updated_at = ?::bigint,
       reply_kind = CASE WHEN v.set_kind AND NOT v.keeps THEN v.reply_kind ELSE l.reply_kind END,
       decline_reason = CASE WHEN v.set_reason AND NOT v.keeps THEN v.decline_reason ELSE l.decline_reason END
     FROM (SELECT w.*, (l0.status = 'replied' AND l0.reply_kind = ANY(w.stronger)) AS keeps
           FROM (VALUES ${rows.map(() => tuple).join(', ')})
             AS w(account_id, id, status, set_kind, reply_kind, set_reason, decline_reason, replaces, stronger)
           JOIN leads l0 ON l0.account_id = w.account_id AND l0.id = w.id) AS v
     WHERE l.account_id = v.account_id AND l.id = v.id AND l.status = ANY(v.replaces)
     RETURNING l.id, l.account_id`,
    [at, ...rows.flat()],
  );
  const hit = new Set(changed.map((r) => `${r.account_id} ${r.id}`));
  return items.map((i) => hit.has(`${i.accountId} ${i.leadId}`));
}
