/**
 * `mail_subject` (docs/decisions/experiments.md, "What can vary: the subject or the opening"): the variants are subject
 * lines of one mail, the control the draft's own; each contact gets the draft under its variant's subject. A winner
 * becomes the subject of later mail about the topic (adopted-defaults.ts).
 */
import { adoptAsDefault, type ContactKind, textVariants } from './kind.js';

export const mailSubject: ContactKind<'mail_subject'> = {
  thing: 'mail_subject',
  reaches: 'contacts',
  work: 'email',
  words: 'the subject line',
  startedWorkWaits: 'its mail waits under the email settings',
  ratio: 'exposed',
  replans: true,
  variants: (input) => ({ values: textVariants(input.draft.subject, input.challengers) }),
  mail: (e, variant) => ({ subject: variant.value, body: e.draft.body, details: {} }),
  adopt: (db, e, value, at) => adoptAsDefault(db, e, at, () => value),
};

/** A draft under the subject a decided experiment adopted. */
export const withSubject = (draft: { subject: string; body: string }, value: string) => ({ subject: value, body: draft.body });
