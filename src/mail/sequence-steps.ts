import { z } from 'zod';
import { mailDraftOf } from './mail-draft.js';

/** A sequence is a first mail and up to this many follow-ups. */
export const MAX_FOLLOW_UPS = 5;
/** A follow-up waits from one minute to 60 days after the step before it. */
export const MIN_DELAY_DAYS = 1 / 1440;
export const MAX_DELAY_DAYS = 60;
const DAY_MS = 86_400_000;

/** One follow-up as the agent proposes it (`payload.steps[]` of a `sequence` card). */
export const FollowUp = z.object({
  subject: z.string().trim().max(998).optional(),
  body: z.string().trim().min(1).max(16_000),
  /** Days after the step before it ("3 days later, if no reply"). */
  delayDays: z.number().min(MIN_DELAY_DAYS).max(MAX_DELAY_DAYS),
});
export const FollowUps = z.array(FollowUp).max(MAX_FOLLOW_UPS);

/** One step as shipped: step 0 is the card's draft, each later one waits `delayMs` after the one before. */
export interface SequenceStep {
  subject: string;
  body: string;
  delayMs: number;
}

/** Why this payload's follow-ups are not a valid sequence, or null. */
export function followUpsProblem(payload: Record<string, unknown>): string | null {
  const r = FollowUps.safeParse(payload.steps ?? []);
  if (r.success) return null;
  const issue = r.error.issues[0]!;
  return `steps${issue.path.length ? `.${issue.path.join('.')}` : ''}: ${issue.message}`;
}

/**
 * The steps of a sequence card: its draft, then its follow-ups (a follow-up without a subject answers
 * the first: `Re: <subject>`). Throws on follow-ups the tool would have refused (`followUpsProblem`).
 */
export function sequenceStepsOf(card: { title: string; payload: Record<string, unknown> }): SequenceStep[] {
  const first = mailDraftOf(card);
  const reSubject = /^re:/i.test(first.subject) ? first.subject : `Re: ${first.subject}`;
  const followUps = FollowUps.parse(card.payload.steps ?? []);
  return [
    { subject: first.subject, body: first.body, delayMs: 0 },
    ...followUps.map((f) => ({ subject: f.subject || reSubject, body: f.body, delayMs: Math.round(f.delayDays * DAY_MS) })),
  ];
}
