import { cannotShip } from '../channels/registry.js';
import type { Config } from '../config.js';
import type { Queryable } from '../db.js';
import { approvalMode } from './approval.service.js';
import { isBudgetCard } from './cards/card-shape.js';
import type { Card } from './cards/cards.repository.js';

/**
 * The trust ladder. Per account and kind of work we count approvals a person shipped unchanged (no
 * edit, no revision, no note). At `review.trustThreshold` new cards of that kind get `autoResolveAt`
 * and resolve themselves then unless a person acts first. A dismiss resets the count to zero.
 * Spending, budget changes and cards born from outside data never auto-resolve.
 */
export async function trustLevel(q: Queryable, accountId: string, kindOfWork: string): Promise<number> {
  const row = await q('trust_levels')
    .where({ account_id: accountId, kind_of_work: kindOfWork })
    .first<{ approved_unchanged: number } | undefined>();
  return row?.approved_unchanged ?? 0;
}

/** One more approval shipped unchanged. */
export async function raiseTrust(q: Queryable, accountId: string, kindOfWork: string, at = Date.now()): Promise<void> {
  await q.raw(
    `insert into trust_levels (account_id, kind_of_work, approved_unchanged, updated_at) values (?, ?, 1, ?)
     on conflict (account_id, kind_of_work) do update set ` +
      `approved_unchanged = trust_levels.approved_unchanged + 1, updated_at = excluded.updated_at`,
    [accountId, kindOfWork, at],
  );
}

export async function resetTrust(q: Queryable, accountId: string, kindOfWork: string, at = Date.now()): Promise<void> {
  await q('trust_levels')
    .insert({ account_id: accountId, kind_of_work: kindOfWork, approved_unchanged: 0, updated_at: at })
    .onConflict(['account_id', 'kind_of_work'])
    .merge();
}

export async function trustLevels(q: Queryable, accountId: string): Promise<Record<string, number>> {
  const rows: { kind_of_work: string; approved_unchanged: number }[] = await q('trust_levels').where({ account_id: accountId });
  return Object.fromEntries(rows.map((r) => [r.kind_of_work, r.approved_unchanged]));
}

const WORK_WORDS: Record<string, string> = {
  email: 'email drafts',
  sequence: 'sequences',
  network_message: 'network messages',
  blog_post: 'blog posts',
  ad_test: 'ad tests',
};

function clock(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export interface AutoResolvePlan {
  at: number;
  detail: { autoResolve: { at: number; reason: string; kindOfWork: string; approvedUnchanged: number; threshold: number } };
}

/** Whether (and when) the ladder lets this new card resolve itself; the detail says why and when. */
export async function planAutoResolve(q: Queryable, config: Config, card: Card, now = Date.now()): Promise<AutoResolvePlan | null> {
  const kind = card.kindOfWork;
  if (!kind || kind === 'spend' || isBudgetCard(card) || card.fromOutside || card.status !== 'pending') return null;
  if (card.version > 1) return null;
  // Only a kind on the ladder gets a deadline: `always_ask` never does, and `ship` work never waits.
  if ((await approvalMode(q, card.accountId, kind)) !== 'trust_ladder') return null;
  // Work no adapter can ship here gets no deadline: nothing would happen at it (a person's approve is refused too).
  if (await cannotShip(q, card.accountId, kind)) return null;
  const level = await trustLevel(q, card.accountId, kind);
  const threshold = config.review.trustThreshold;
  if (level < threshold) return null;
  const at = now + config.review.autoResolveDelayMs;
  const what = WORK_WORDS[kind] ?? kind;
  const verb = card.sourceType === 'mail_draft' || card.sourceType === 'mail_reply' ? 'sends' : 'ships';
  return {
    at,
    detail: {
      autoResolve: {
        at,
        reason: `The last ${level} ${what} were approved unchanged, so this one ${verb} at ${clock(at)} unless someone acts first.`,
        kindOfWork: kind,
        approvedUnchanged: level,
        threshold,
      },
    },
  };
}
