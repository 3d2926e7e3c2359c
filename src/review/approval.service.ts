import type { Queryable } from '../db.js';

import { KINDS_OF_WORK, type KindOfWork } from '../channels/kinds.js';

export { KINDS_OF_WORK, type KindOfWork };

/** True unless the account set this kind of work to run without approval. Spending is always true. */
export async function needsApproval(q: Queryable, accountId: string, kind: KindOfWork | string): Promise<boolean> {
  if (kind === 'spend') return true;
  if (!(KINDS_OF_WORK as readonly string[]).includes(kind)) return true;
  const row = await q('approval_settings')
    .where({ account_id: accountId, kind_of_work: kind })
    .first<{ requires_approval: boolean } | undefined>();
  return row ? row.requires_approval : true;
}

/** Sets whether a kind of work needs approval; `spend` cannot be freed (the call is refused). */
export async function setApproval(q: Queryable, accountId: string, kind: KindOfWork, requiresApproval: boolean): Promise<void> {
  if (kind === 'spend' && !requiresApproval) throw new Error('spending always waits for a person');
  await q('approval_settings')
    .insert({ account_id: accountId, kind_of_work: kind, requires_approval: requiresApproval, updated_at: Date.now() })
    .onConflict(['account_id', 'kind_of_work'])
    .merge();
}

/** Every kind of work with whether it needs approval (`spend` always does). */
export async function approvalSettings(q: Queryable, accountId: string): Promise<Record<KindOfWork, 'required' | 'auto'>> {
  const rows: { kind_of_work: string; requires_approval: boolean }[] = await q('approval_settings').where({ account_id: accountId });
  const set = new Map(rows.map((r) => [r.kind_of_work, r.requires_approval]));
  return Object.fromEntries(KINDS_OF_WORK.map((k) => [k, k === 'spend' || (set.get(k) ?? true) ? 'required' : 'auto'])) as Record<
    KindOfWork,
    'required' | 'auto'
  >;
}
