import type { ReplyKind } from './leads.types.js';

/**
 * How much a reply's kind says, for keeping the strongest: a later reply replaces a lead's (or a
 * contact's) reply kind only when it says as much or more. A decision (interested, a referral, not now,
 * not interested, wrong person) outranks a question, which outranks a reply the classifier could not
 * place (`other`) or an automatic one (`out_of_office`). Among decisions the latest wins (a person may
 * change their mind); `unsubscribe` is an opt-out and is not ranked here (it replaces anything).
 */
const RANK: Record<ReplyKind, number> = {
  interested: 2,
  referral: 2,
  not_now: 2,
  not_interested: 2,
  wrong_person: 2,
  unsubscribe: 2,
  question: 1,
  other: 0,
  out_of_office: 0,
};

const rankOf = (kind: string | null | undefined): number => (kind && kind in RANK ? RANK[kind as ReplyKind] : -1);

/** Whether a reply of kind `next` may replace the recorded `current` kind (a weaker one never does). */
export const replyKindMayReplace = (current: string | null | undefined, next: string | null | undefined): boolean =>
  rankOf(next) >= rankOf(current);

/** The kinds that outrank `kind` (what a reply of that kind must not overwrite). */
export const kindsStrongerThan = (kind: string | null | undefined): ReplyKind[] =>
  (Object.keys(RANK) as ReplyKind[]).filter((k) => RANK[k] > rankOf(kind));
