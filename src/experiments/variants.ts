/**
 * How a variant's text enters a mail: the subject replaced, or the opening (the first paragraph after the
 * greeting) replaced; a send window leaves the text as it is (it rides on the card: send-window.ts).
 * Used when an experiment drafts its mail and when a later draft uses an adopted default.
 */
import type { Thing } from './experiments.repository.js';

/** The words for what varies, in a sentence: "the subject line". */
export const THING_WORDS: Record<Thing, string> = {
  mail_subject: 'the subject line',
  mail_opening: 'the opening line',
  send_window: 'the time of day the mail is sent',
};

const GREETING = /^(hi|hello|hey|dear|good (morning|afternoon|evening))\b/i;

/** The draft with `value` in place of its subject or opening. */
export function withVariant(draft: { subject: string; body: string }, thing: Thing, value: string): { subject: string; body: string } {
  if (thing === 'mail_subject') return { subject: value, body: draft.body };
  if (thing === 'send_window') return { ...draft };
  const paragraphs = draft.body.split(/\n\s*\n/);
  const at = paragraphs.length > 1 && GREETING.test(paragraphs[0]!.trim()) ? 1 : 0;
  paragraphs[at] = value;
  return { subject: draft.subject, body: paragraphs.join('\n\n') };
}

/** The opening a draft has now (what a `mail_opening` experiment's control keeps). */
export function openingOf(body: string): string {
  const paragraphs = body.split(/\n\s*\n/);
  const at = paragraphs.length > 1 && GREETING.test(paragraphs[0]!.trim()) ? 1 : 0;
  return (paragraphs[at] ?? '').trim();
}
