import type { KindOfWork } from '../channels/kinds.js';
import type { Option } from '../review/cards/card-shape.js';

/**
 * What the "did it go out?" card (`mail_delivery_unknown`) says for one kind of work: the question, where a
 * person looks to answer it, and its two choices (their values are always `mark_sent` / `mark_not_sent`).
 */
interface DeliveryWords {
  /** The question about the work: `(noun, to, title)` → "Did the mail to … go out?". */
  question: (noun: string, to: string | null, title: string) => string;
  /** Where a person can see whether it happened, as a sentence. */
  check: string;
  /** "it is not {again} again unless you say so". */
  again: string;
  /** The labels of `mark_sent` and `mark_not_sent`. */
  yes: string;
  no: string;
}

const wentOut = (noun: string, to: string | null, title: string) =>
  to ? `Did the ${noun} to ${to} go out?` : `Did the ${noun} "${title}" go out?`;

const MAIL: DeliveryWords = {
  question: wentOut,
  check: "Check with the recipient or in the mail account's sent folder.",
  again: 'sent',
  yes: 'It arrived: mark the card sent',
  no: 'It did not arrive: put the card back so it can be sent',
};

/** One place for every kind's wording; a new kind of work must add its own (the Record is exhaustive). */
export const DELIVERY_WORDS: Record<KindOfWork, DeliveryWords> = {
  email: MAIL,
  sequence: MAIL,
  network_message: {
    question: wentOut,
    check: "Check the sent messages (or sent invitations, for a connection request) of the account's profile on the professional network.",
    again: 'sent',
    yes: 'It was sent: mark the card sent',
    no: 'It was not sent: put the card back so it can be sent',
  },
  blog_post: {
    question: wentOut,
    check: 'Check whether the post is on the blog.',
    again: 'published',
    yes: 'It is published: mark the card sent',
    no: 'It is not published: put the card back so it can be published',
  },
  ad_test: {
    question: (noun, _to, title) => `Was the ${noun} "${title}" created?`,
    check: 'Check the campaigns (and their ads) in the ad account for this test.',
    again: 'created',
    yes: 'It was created: mark the card sent',
    no: 'It was not created: put the card back so it can be approved again',
  },
  spend: {
    question: (noun, _to, title) => `Was the ${noun} "${title}" applied?`,
    check:
      "Check the ad account's budget history (the change log of its campaign budgets). Until you answer, the change counts " +
      'against the monthly spend cap.',
    again: 'applied',
    yes: 'It was applied: mark the card sent',
    no: 'It was not applied: put the card back so it can be approved again',
  },
  experiment: {
    question: (noun, _to, title) => `Did the ${noun} "${title}" start?`,
    check: "Check the experiment in /results: a started one shows its variants' exposures.",
    again: 'started',
    yes: 'It started: mark the card sent',
    no: 'It did not start: put the card back so it can be approved again',
  },
};

const isKind = (k: string): k is KindOfWork => Object.hasOwn(DELIVERY_WORDS, k);

/**
 * The delivery question's title, prompt and options for a fence of `kindOfWork` (mail wording for a kind no
 * longer known). `noun` and `service` are the adapter's words ("network message", "the network provider").
 */
export function deliveryQuestion(
  kindOfWork: string,
  work: { to: string | null; subject: string },
  words: { noun: string; service: string },
): { title: string; prompt: string; options: Option[] } {
  const w = isKind(kindOfWork) ? DELIVERY_WORDS[kindOfWork] : MAIL;
  const service = `${words.service[0]!.toUpperCase()}${words.service.slice(1)}`;
  return {
    title: w.question(words.noun, work.to, work.subject),
    prompt:
      `${service} took this ${words.noun} but never confirmed it, and it cannot be asked. ${w.check} ` +
      `It is not ${w.again} again unless you say so.`,
    options: [
      { value: 'mark_sent', label: w.yes },
      { value: 'mark_not_sent', label: w.no },
    ],
  };
}
