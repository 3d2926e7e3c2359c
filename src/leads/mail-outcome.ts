import type { Queryable } from '../db.js';
import type { ReplyKind } from './leads.types.js';
import { leadOnlyReplaces, type OutcomeStatus } from './outcome-rules.js';
import { kindsStrongerThan } from './reply-strength.js';

/**
 * What a channel learned of a lead's contact: mail reached it (`contacted`, when a send settles),
 * it replied, its address bounced, or it unsubscribed. What it may replace: outcome-rules.ts.
 */
export interface LeadMailOutcome {
  status: OutcomeStatus;
  replyKind?: ReplyKind | null;
  declineReason?: string | null;
}

/**
 * Records an outcome on the account's lead itself, for work that names no contact (the lead is its own
 * only contact: `leadOnlyReplaces`), in one conditional update. `replyKind` and
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
    `{${leadOnlyReplaces(o.status).join(',')}}`,
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
