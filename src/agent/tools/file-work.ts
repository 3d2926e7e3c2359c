import type { Queryable } from '../../db.js';
import { turnReading } from '../core/doors.js';
import { newId } from '../../ids.js';
import { needsApproval, type KindOfWork, shipBySetting } from '../../review/approval.service.js';
import type { Card } from '../../review/cards/card.js';
import { addCard } from '../../review/cards/doors.js';

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

/** The verbs and button of a card the agent makes, from its kind and source. */
export function cardShape(kind: string, sourceType: string): { actions: string[]; primaryLabel: string } {
  if (sourceType === 'mail_draft') return { actions: ['send', 'snooze', 'dismiss'], primaryLabel: 'Send' };
  if (kind === 'question') return { actions: ['answer', 'snooze', 'dismiss'], primaryLabel: 'Answer' };
  if (kind === 'choice') return { actions: ['choose', 'snooze', 'dismiss'], primaryLabel: 'Choose' };
  return { actions: ['approve', 'snooze', 'dismiss'], primaryLabel: 'Approve' };
}

export interface WorkToFile {
  accountId: string;
  turnId: string | null;
  fromOutside: boolean;
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
export function workCard(w: WorkToFile, approval: boolean) {
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

/**
 * Files work as a review card: it waits for a person, or (the account lets this kind run without approval) the
 * review queue ships it through its fenced path, decided by `setting`. Nothing ships here.
 */
export async function fileWork(q: Queryable, w: WorkToFile, approval?: boolean): Promise<Filed> {
  const needs = approval ?? (await needsApproval(q, w.accountId, w.work));
  const prompt = w.prompt
    ? await w.prompt(needs)
    : { prompt: needs ? 'Review before it ships.' : 'This account lets this kind of work run without approval.' };
  const card = { ...workCard(w, needs), ...prompt };
  return { card: needs ? await addCard(q, card) : await shipBySetting(q, card, turnReading), approval: needs };
}
