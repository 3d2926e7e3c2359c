/**
 * `mail_opening` (docs/decisions/experiments.md, "What can vary: the subject or the opening"): the variants are the
 * opening of one mail (its first paragraph after the greeting), the control the draft's own; each contact gets the
 * draft with its variant's opening. A winner becomes the opening of later mail about the topic (adopted-defaults.ts).
 */
import { adoptAsDefault, type ContactKind, textVariants } from './kind.js';

const GREETING = /^(hi|hello|hey|dear|good (morning|afternoon|evening))\b/i;

/** Where a body's opening is: the paragraph after a greeting, else the first. */
const openingAt = (paragraphs: readonly string[]) => (paragraphs.length > 1 && GREETING.test(paragraphs[0]!.trim()) ? 1 : 0);

/** The draft with `value` in place of its opening. */
export function withOpening(draft: { subject: string; body: string }, value: string): { subject: string; body: string } {
  const paragraphs = draft.body.split(/\n\s*\n/);
  paragraphs[openingAt(paragraphs)] = value;
  return { subject: draft.subject, body: paragraphs.join('\n\n') };
}

/** The opening a draft has now (what a later mail's words name as the default it used). */
export function openingOf(body: string): string {
  const paragraphs = body.split(/\n\s*\n/);
  return (paragraphs[openingAt(paragraphs)] ?? '').trim();
}

export const mailOpening: ContactKind<'mail_opening'> = {
  thing: 'mail_opening',
  reaches: 'contacts',
  work: 'email',
  words: 'the opening line',
  startedWorkWaits: 'its mail waits under the email settings',
  ratio: 'exposed',
  replans: true,
  // The control as proposals always read it: the second paragraph (after the greeting), else the whole body.
  variants: (input) => ({ values: textVariants(input.draft.body.split(/\n\s*\n/)[1] ?? input.draft.body, input.challengers) }),
  mail: (e, variant) => ({ ...withOpening(e.draft, variant.value), details: {} }),
  adopt: (db, e, value, at) => adoptAsDefault(db, e, at, () => value),
};
