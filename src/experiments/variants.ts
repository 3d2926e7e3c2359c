/**
 * How a variant's text enters a mail: the subject replaced, or the opening (the first paragraph after the
 * greeting) replaced; a send window leaves the text as it is (it rides on the card: send-window.ts).
 * Used when an experiment drafts its mail and when a later draft uses an adopted default.
 */
import type { Thing } from './experiments.repository.js';
import { waitWords } from './sequence-wait.js';

/** The words for what varies, in a sentence: "the subject line". */
export const THING_WORDS: Record<Thing, string> = {
  mail_subject: 'the subject line',
  mail_opening: 'the opening line',
  sequence_wait: 'the wait before a follow-up',
  send_window: 'the time of day the mail is sent',
  ad_variant: 'the ad',
  post_title: 'the title of a blog post',
};

/** The words for what one experiment varies: THING_WORDS, with a sequence wait's follow-up named ("the wait before follow-up 2"). */
export const thingWords = (thing: Thing, draft: { step?: number }) =>
  thing === 'sequence_wait' && draft.step ? waitWords(draft.step) : THING_WORDS[thing];

const GREETING = /^(hi|hello|hey|dear|good (morning|afternoon|evening))\b/i;

/** The draft with `value` in place of its subject or opening (a sequence wait's first mail stays as it is). */
export function withVariant(draft: { subject: string; body: string }, thing: Thing, value: string): { subject: string; body: string } {
  if (thing === 'mail_subject') return { subject: value, body: draft.body };
  // A sequence's wait and a send window ride on the card (sequence-wait.ts, send-window.ts); an ad and a post are not mail.
  if (thing !== 'mail_opening') return { subject: draft.subject, body: draft.body };
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
