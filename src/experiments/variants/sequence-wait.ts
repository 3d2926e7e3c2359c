/**
 * `sequence_wait` (docs/decisions/experiments.md, "What can vary: a sequence step's wait"): the variants are waits in
 * days before one follow-up N of a sequence (a first mail and its follow-ups), the control the draft's own wait; each
 * contact gets the whole sequence with its variant's wait. Here: checking a proposal (the sequence and the challenger
 * waits, within the sequence limits of src/mail/sequence-steps.ts), a variant's follow-ups, how long after its first mail
 * a contact is judged, adopting a winning wait, and a later sequence about the topic starting from it.
 */
import { z } from 'zod';
import type { Queryable } from '../../db.js';
import { followUpsProblem, FollowUps, MAX_DELAY_DAYS, MAX_FOLLOW_UPS, MIN_DELAY_DAYS } from '../../mail/sequence-steps.js';
import type { SequenceParts, WaitStep } from '../experiment.js';
import { experimentRows } from '../experiment-rows.js';
import { adoptAsDefault, type ContactKind } from './kind.js';

export type { SequenceParts, WaitStep } from '../experiment.js';

const DAY_MS = 86_400_000;

/** "the wait before follow-up 2". */
export const waitWords = (step: number) => `the wait before follow-up ${step}`;

const amount = (n: number, unit: string) => {
  const r = Math.round(n * 100) / 100;
  return `${r} ${unit}${r === 1 ? '' : 's'}`;
};

/** A wait in words: "7 days", "1 day", "12 hours", "30 minutes". */
export function daysWords(days: number): string {
  if (days >= 1) return amount(days, 'day');
  if (days * 24 >= 1) return amount(days * 24, 'hour');
  return amount(days * 1440, 'minute');
}

/** A variant's description: "a 7-day wait". */
export const waitDescription = (value: string) => `a ${daysWords(Number(value)).replace(/s$/, '').replace(' ', '-')} wait`;

/** The follow-ups with follow-up `step` (1-based) waiting `days`. */
export function withWait(steps: readonly WaitStep[], step: number, days: number): WaitStep[] {
  return steps.map((s, i) => (i === step - 1 ? { ...s, delayDays: days } : { ...s }));
}

/** A variant's follow-ups: the draft's, with its wait (`value`, days) before follow-up N. */
export function waitSteps(draft: Partial<SequenceParts>, value: string): WaitStep[] {
  return withWait(draft.steps ?? [], draft.step ?? 0, Number(value));
}

/**
 * How much longer than the reply window a contact's first mail must be old before it counts in a look: for a
 * `sequence_wait` experiment, the whole sequence at the longest variant's wait (every follow-up's wait, N's at its
 * longest), the same for every variant, so no variant is judged before its last follow-up could be answered.
 * Nothing for an experiment on a mail's text.
 */
export function judgedAfterMs(e: { thing: string; draft: Partial<SequenceParts>; plan: { variants: readonly { value: string }[] } }) {
  const { draft } = e;
  if (e.thing !== 'sequence_wait' || !draft.steps?.length || !draft.step) return 0;
  const longest = Math.max(...e.plan.variants.map((v) => Number(v.value)));
  return Math.round(withWait(draft.steps, draft.step, longest).reduce((sum, s) => sum + s.delayDays, 0) * DAY_MS);
}

/** An adopted default: each follow-up's wait in days by its number ({"2": 7}); empty when none or unreadable. */
export function waitDefaults(value: string | null): Record<string, number> {
  if (!value) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter(([n, d]) => /^\d+$/.test(n) && typeof d === 'number' && d > 0));
  } catch {
    return {};
  }
}

/** propose_experiment's extra arguments for a sequence wait (loose here: waitVariants refuses in words). */
export const WAIT_TOOL_ARGS = {
  steps: z
    .array(z.object({ subject: z.string().optional(), body: z.string(), delayDays: z.number() }))
    .max(MAX_FOLLOW_UPS)
    .optional()
    .describe("sequence_wait only: the sequence's follow-ups after the first mail (subject and body), each waiting delayDays"),
  step: z.number().int().optional().describe('sequence_wait only: which follow-up (1 = the first) has the wait that varies'),
};

/** A sequence wait proposal, checked: its variants' values (days; the control first) and how the card shows them. */
export interface WaitVariants {
  values: string[];
  describe(value: string): string;
  /** The draft as stored: the first mail, its follow-ups as parsed, and N. */
  draft: { subject: string; body: string } & SequenceParts;
  /** The follow-ups' texts (checked for private notes and links like the first mail's). */
  texts: string[];
  /** A line for the card: what each contact gets and when it counts. */
  note: string;
}

const DAYS = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:days?)?\s*$/i;

/** A challenger's wait in days ("7", "7 days", or a number), or null when it is none. */
function daysOf(c: string | number): number | null {
  const m = typeof c === 'number' ? [String(c), String(c)] : DAYS.exec(c);
  const days = m ? Number(m[1]) : Number.NaN;
  return Number.isFinite(days) && days >= MIN_DELAY_DAYS && days <= MAX_DELAY_DAYS ? days : null;
}

/**
 * Checks a `sequence_wait` proposal: the follow-ups a valid sequence (sequence-steps.ts), follow-up `step` one of
 * them, each challenger a wait within the sequence limits. The refusal in words, or the variants (the control is the
 * draft's own wait before follow-up N).
 */
export function waitVariants(
  draft: { subject: string; body: string } & Partial<SequenceParts>,
  challengers: readonly (string | number)[],
): WaitVariants | string {
  const problem = followUpsProblem({ steps: draft.steps ?? [] });
  if (problem) return `not a valid sequence (${problem})`;
  const steps = FollowUps.parse(draft.steps ?? []);
  if (!steps.length) return 'a sequence_wait experiment needs the sequence: its follow-ups in `steps`';
  const step = draft.step;
  if (step === undefined || !Number.isInteger(step) || step < 1 || step > steps.length) {
    return `\`step\` must name one of the sequence's ${steps.length} follow-ups (1 to ${steps.length})`;
  }
  const waits: number[] = [];
  for (const c of challengers) {
    const days = daysOf(c);
    if (days === null) return `each challenger is a wait in days, from one minute to ${MAX_DELAY_DAYS} days; "${c}" is not`;
    waits.push(days);
  }
  const values = [steps[step - 1]!.delayDays, ...waits].map(String);
  const longest = Math.max(...values.map(Number));
  const whole = withWait(steps, step, longest).reduce((sum, s) => sum + s.delayDays, 0);
  const note =
    `Each contact gets the whole sequence (the first mail and ${steps.length} follow-up${steps.length === 1 ? '' : 's'}); ` +
    `only ${waitWords(step)} differs. A contact counts from its first mail going out, and only once ${daysWords(whole)} ` +
    '(the whole sequence at the longest wait) and the reply window have passed, so no wait is judged early; ' +
    'a reply to any of its mails is an outcome.';
  return {
    values,
    describe: waitDescription,
    draft: { subject: draft.subject, body: draft.body, steps, step },
    texts: steps.flatMap((s) => [s.subject ?? '', s.body]),
    note,
  };
}

/**
 * A sequence's work details with the waits experiments adopted for `topic` in place of its own (for the follow-ups
 * it has), and the words saying so ("the wait before follow-up 1 \"7 days\""); null when no default applies.
 */
export async function withWaitDefaults(
  q: Queryable,
  accountId: string,
  topic: string,
  details: Record<string, unknown> | undefined,
): Promise<{ details: Record<string, unknown>; words: string[] } | null> {
  const steps = details?.steps;
  if (!Array.isArray(steps) || !steps.length) return null;
  const waits = waitDefaults(await experimentRows(q).defaultFor(accountId, 'sequence_wait', topic));
  const applies = (n: number) => waits[String(n)] !== undefined && steps[n - 1] && typeof steps[n - 1] === 'object';
  const used = steps.map((_, i) => i + 1).filter(applies);
  if (!used.length) return null;
  const out = steps.map((s, i) => (used.includes(i + 1) ? { ...(s as object), delayDays: waits[String(i + 1)] } : s));
  return { details: { ...details, steps: out }, words: used.map((n) => `${waitWords(n)} "${daysWords(waits[String(n)]!)}"`) };
}

export const sequenceWait: ContactKind<'sequence_wait'> = {
  thing: 'sequence_wait',
  reaches: 'contacts',
  work: 'sequence',
  words: 'the wait before a follow-up',
  wordsOf: (draft) => (draft.step ? waitWords(draft.step) : 'the wait before a follow-up'),
  startedWorkWaits: 'its mail waits under the sequence settings',
  ratio: 'exposed',
  replans: true,
  judgedAfterMs,
  variants: (input) => waitVariants(input.draft, input.challengers),
  // The first mail stays as it is; the follow-ups carry the variant's wait.
  mail: (e, variant) => ({ subject: e.draft.subject, body: e.draft.body, details: { steps: waitSteps(e.draft, variant.value) } }),
  // The topic's default waits gain this follow-up's (the others kept).
  adopt: (db, e, value, at) =>
    adoptAsDefault(db, e, at, async (q) =>
      JSON.stringify({
        ...waitDefaults(await experimentRows(q).defaultFor(e.accountId, 'sequence_wait', e.topic)),
        [String(e.draft.step)]: Number(value),
      }),
    ),
};
