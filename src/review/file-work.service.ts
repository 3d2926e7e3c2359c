/**
 * Filing work as a review card (docs/decisions/code-structure.md, "Filing work is review's"): the card a kind of work
 * becomes, and whether it waits for a person or ships by the account's setting. The agent's tools (`ship`, through
 * src/agent/tools/file-work.ts) and the experiments (a proposal, each contact's mail, an ad test, a post) file through
 * here; nothing ships here.
 */
import type { Queryable } from '../db.js';
import { newId } from '../ids.js';
import { type KindOfWork, needsApproval, shipBySetting } from './approval.service.js';
import type { Card } from './cards/card.js';
import { addCard } from './cards/doors.js';
import type { TurnReading } from './outside-data.js';

/** Where a shipping kind lands in the review queue. */
export const SHIP_SOURCE: Record<KindOfWork, string> = {
  email: 'mail_draft',
  sequence: 'sequence',
  network_message: 'network_message',
  blog_post: 'blog_post',
  ad_test: 'ad_test',
  spend: 'budget_change',
  experiment: 'experiment',
};

/** The verbs and button of a card, from its kind and source. */
export function cardShape(kind: string, sourceType: string): { actions: string[]; primaryLabel: string } {
  if (sourceType === 'mail_draft') return { actions: ['send', 'snooze', 'dismiss'], primaryLabel: 'Send' };
  if (kind === 'question') return { actions: ['answer', 'snooze', 'dismiss'], primaryLabel: 'Answer' };
  if (kind === 'choice') return { actions: ['choose', 'snooze', 'dismiss'], primaryLabel: 'Choose' };
  return { actions: ['approve', 'snooze', 'dismiss'], primaryLabel: 'Approve' };
}

export interface WorkToFile {
  accountId: string;
  /** The agent's turn the work came from; null for work no turn made (an experiment's mail, ad test or post). */
  turnId: string | null;
  fromOutside: boolean;
  /**
   * How review reads the turn, to judge whether outside data led to it (`shipBySetting`): the agent's `turnReading`,
   * handed in since review stands below the agent. Work filed for a turn must carry it.
   */
  readTurn?: TurnReading;
  work: KindOfWork;
  title: string;
  to?: string;
  subject?: string;
  body?: string;
  amount?: number;
  details?: Record<string, unknown>;
  /** A card id of the caller's (a drafter that must not draft twice names its cards); a new one when absent. */
  id?: string;
  /** The prompt of the card; says whether it waits for approval when absent. */
  prompt?: (approval: boolean) => Promise<{ prompt: string }> | { prompt: string };
}

/** A filed piece of work: its card, and whether the account's setting let it ship without a person. */
export interface Filed {
  card: Card;
  approval: boolean;
}

/** The card a piece of work becomes, before it is filed (for checks such as the private-text one). */
export function workCard(w: Omit<WorkToFile, 'readTurn'>, approval: boolean) {
  const sourceType = SHIP_SOURCE[w.work];
  const payload: Record<string, unknown> = { work: w.work, approvalRequired: approval, ...(w.details ?? {}) };
  if (w.to !== undefined) payload.to = w.to;
  if (w.subject !== undefined || w.body !== undefined) payload.draft = { subject: w.subject ?? '', body: w.body ?? '' };
  if (w.amount !== undefined) payload.amount = w.amount;
  return {
    id: w.id ?? newId('card'),
    accountId: w.accountId,
    kind: 'approval',
    sourceType,
    title: w.title,
    summary: w.subject ?? w.title,
    budgetChange: w.work === 'spend' ? { amount: w.amount ?? null } : null,
    payload,
    turnId: w.turnId,
    fromOutside: w.fromOutside,
    ...cardShape('approval', sourceType),
  };
}

/** Work no turn made has no turn to read: what it carries is all there is (`fromOutside`). */
const noTurn: TurnReading = async () => null;

/**
 * Files work as a review card: it waits for a person, or (the account lets this kind run without approval) the
 * review queue ships it through its fenced path, decided by `setting`. Nothing ships here.
 */
export async function fileWork(q: Queryable, w: WorkToFile, approval?: boolean): Promise<Filed> {
  if (w.turnId !== null && !w.readTurn) throw new Error('work filed for a turn needs how its turn is read (readTurn)');
  const needs = approval ?? (await needsApproval(q, w.accountId, w.work));
  const prompt = w.prompt
    ? await w.prompt(needs)
    : { prompt: needs ? 'Review before it ships.' : 'This account lets this kind of work run without approval.' };
  const { readTurn = noTurn, ...work } = w;
  const card = { ...workCard(work, needs), ...prompt };
  return { card: needs ? await addCard(q, card) : await shipBySetting(q, card, readTurn), approval: needs };
}
