import { KINDS_OF_WORK, type KindOfWork } from '../channels/kinds.js';
import { cannotShip } from '../channels/registry.js';
import type { Queryable } from '../db.js';
import { kindOfWorkFor } from './cards/card-shape.js';
import type { Card, NewCard } from './cards/card.js';
import { addCard } from './cards/doors.js';
import { cardFromOutsideData, type TurnReading } from './outside-data.js';

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

/**
 * Work of a kind the account lets run without approval (spend never qualifies): the card is recorded
 * already due, and the card-timers sweep ships it through the same fenced path as a person's verb,
 * recorded as decided by the setting. Callers that hold only a database handle (the agent's tools) use
 * this; the card enters through `addCard` like any other. Work prompted by outside data, and work no
 * adapter can ship on this account, still waits as an ordinary card (`autoResolveAt` null; the latter
 * with a note saying which connection is missing).
 */
export async function shipBySetting(q: Queryable, card: NewCard, readTurn: TurnReading): Promise<Card> {
  const at = Date.now();
  const work = card.kindOfWork ?? kindOfWorkFor({ sourceType: card.sourceType, payload: card.payload, budgetChange: card.budgetChange });
  if (!work || work === 'spend') throw new Error('spending always waits for a person');
  // Work a webhook payload prompted waits for a person whatever the setting (outside data is data).
  if (await cardFromOutsideData(q, card, readTurn)) {
    return addCard(q, { ...card, kindOfWork: work, fromOutside: true, ladderChecked: true });
  }
  const missing = await cannotShip(q, card.accountId, work);
  if (missing) {
    return addCard(q, {
      ...card,
      kindOfWork: work,
      ladderChecked: true,
      detail: { note: `Not shipped automatically: ${missing}; it waits for a person` },
    });
  }
  const reason = `This account lets ${work.replace(/_/g, ' ')} run without approval, so it ships right away; nobody needs to act.`;
  return addCard(q, {
    ...card,
    kindOfWork: work,
    autoResolveAt: at,
    ladderChecked: true,
    detail: { autoResolve: { at, by: 'setting', reason } },
  });
}
