import type { ReplyKind } from '../../leads/leads.types.js';

/** What a human reply meant, by rule or by the model; `declineReason` is ours, never the sender's words. */
export interface ReplyVerdict {
  replyKind: ReplyKind;
  declineReason: string | null;
  /** Which rule (or `llm`) decided, kept in the inbound row's details. */
  rule: string;
}

interface Rule {
  kind: ReplyKind;
  name: string;
  test: RegExp;
  /** Only when this also matches (a referral names someone to ask). */
  and?: RegExp;
  /** The decline reason, by the first matching refinement, else `reason`. */
  reason?: string;
  refine?: { test: RegExp; reason: string }[];
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;

/** One case-insensitive pattern of phrases (regex source each), matched from a word boundary. */
const anyOf = (phrases: string[], end = ''): RegExp => new RegExp(`\\b(?:${phrases.join('|')})${end}`, 'i');

/**
 * The offline brain's reply rules, first match wins (docs/decisions/mail-loop.md, "What a received message is: parse, match, classify").
 * Read on the reply's new text only (quotes stripped). Declining kinds come before `interested`, so
 * "not interested" or "interesting, but not now" never reads as interest; a question mark alone is last.
 */
export const REPLY_RULES: readonly Rule[] = [
  {
    kind: 'unsubscribe',
    name: 'asks-removal',
    test: anyOf([
      'unsubscribe',
      'remove me',
      'take me off',
      'opt(?:[\\s-])?out',
      'stop (?:e-?mailing|emailing|contacting|writing to|sending)',
      "(?:do not|don'?t) (?:contact|e-?mail) me",
      'no (?:more|further) e-?mails?',
      'abmelden',
      'désinscri',
      'désabonn',
      'avregistrera',
    ]),
    reason: 'asked to be removed',
  },
  {
    kind: 'referral',
    name: 'points-to-colleague',
    test: anyOf(
      [
        '(?:talk to|speak (?:to|with)|reach out to|contact|get in touch with)(?!\\s+(?:me|us)\\b)',
        '(?:right|better) (?:person|contact)',
        'looping in',
        "cc'?(?:ing|'d)",
        'copying',
        'forwarded (?:this|it|your (?:e-?mail|message|note)) to',
        'handles? (?:this|that)',
      ],
      '\\b',
    ),
    and: new RegExp(`${EMAIL.source}|\\b(looping in|cc'?(?:ing|'d)|copying|forwarded)\\b`, 'i'),
    reason: 'pointed to a colleague',
  },
  {
    kind: 'wrong_person',
    name: 'not-the-contact',
    test: anyOf(
      [
        'wrong person',
        'not the (?:right|correct|best) (?:person|contact)',
        'no longer (?:work|with|at|employed)',
        '(?:have |has )?left (?:the company|the business|the firm)',
        'not (?:my|in my) (?:area|department|role|remit)',
        'not responsible for',
        "don'?t (?:handle|deal with|work on)",
      ],
      '\\b',
    ),
    reason: 'not the right contact',
    refine: [{ test: /\b(no longer|left the)\b/i, reason: 'no longer at the company' }],
  },
  {
    kind: 'not_now',
    name: 'later',
    test: anyOf(
      [
        'not (?:right )?now',
        'not the right time',
        "timing (?:is not|isn'?t|is not quite) right",
        'bad timing',
        'budget freeze',
        'no budget (?:this|right)',
        'maybe later',
        '(?:reach|check|circle|follow) (?:out|back|up)(?: again)? (?:in|next|after|later|early|once)',
        'next (?:quarter|year|month)',
        'in a few (?:weeks|months)',
        'after the (?:holidays|summer|new year)',
        '(?:try|ask) (?:me |us )?again (?:in|later|next)',
      ],
      '\\b',
    ),
    reason: 'not the right time',
    refine: [{ test: /\bbudget\b/i, reason: 'no budget at the moment' }],
  },
  {
    kind: 'not_interested',
    name: 'declines',
    test: anyOf([
      'not interested',
      'no,? thanks?(?: you)?',
      'not a (?:good )?fit',
      'not relevant',
      'not for us',
      "(?:we|i)(?:'re| are) (?:all )?set",
      'already (?:have|use|using|work with|got)',
      'pass on this',
      "(?:we|i) don'?t need",
      'no need',
      'nicht interessiert',
      'pas intéressé',
    ]),
    reason: 'not interested',
    refine: [
      { test: /\balready (?:have|use|using|work with|got)\b/i, reason: 'already has a solution' },
      { test: /\bnot a (?:good )?fit|not relevant|not for us\b/i, reason: 'not a fit' },
    ],
  },
  {
    kind: 'interested',
    name: 'wants-to-talk',
    test: anyOf(
      [
        'interested',
        'interesting',
        'sounds (?:good|great|promising)',
        "let'?s (?:talk|chat|connect|meet|do it|set (?:up|something up)|schedule|book)",
        '(?:set up|schedule|book|jump on|hop on|have) a (?:quick )?(?:call|meeting|demo|chat)',
        'happy to (?:chat|talk|connect|meet)',
        'tell me more',
        'send (?:me |over )?(?:more )?(?:info|information|details)',
        'yes,? please',
        'count (?:me|us) in',
        '(?:free|available) (?:on|next|this|for a)',
        'book a time',
      ],
      '\\b',
    ),
  },
  { kind: 'question', name: 'asks', test: /\?|^\s*(?:how|what|which|when|where|why|who|can|could|do|does|is|are)\b/im },
];

/** The reply's kind by the rule table; `other` when nothing clear matches (an empty reply included). */
export function replyByRules(newText: string): ReplyVerdict {
  const text = newText.slice(0, 8_000);
  for (const r of REPLY_RULES) {
    if (!r.test.test(text)) continue;
    if (r.and && !r.and.test(text)) continue;
    return { replyKind: r.kind, declineReason: declineReason(r, text), rule: r.name };
  }
  return { replyKind: 'other', declineReason: null, rule: 'no-rule' };
}

function declineReason(r: Rule, text: string): string | null {
  for (const x of r.refine ?? []) if (x.test.test(text)) return x.reason;
  return r.reason ?? null;
}

/** Our own words for a declining kind the model picked (the model's reason is never stored). */
export const DEFAULT_DECLINE_REASON: Partial<Record<ReplyKind, string>> = {
  not_interested: 'not interested',
  not_now: 'not the right time',
  wrong_person: 'not the right contact',
  referral: 'pointed to a colleague',
  unsubscribe: 'asked to be removed',
};
