/**
 * A `sequence_wait` experiment (docs/decisions/experiments.md, "What can vary: a sequence step's wait"): the variants
 * are waits in days before one follow-up N of a sequence (a first mail and its follow-ups), the control the draft's
 * own wait. Pure: the words, a variant's follow-ups, and how long after its first mail a contact is judged. The
 * limits on a wait and the check of a proposal are the agent's (src/agent/experiments/experiment-sequence-wait.ts).
 */

const DAY_MS = 86_400_000;

/** One follow-up of the sequence an experiment starts from (the `steps[]` of a `sequence` card). */
export interface WaitStep {
  subject?: string | undefined;
  body: string;
  delayDays: number;
}

/** What a `sequence_wait` experiment's draft carries beside its first mail: the follow-ups, and N (1-based). */
export interface SequenceParts {
  steps: WaitStep[];
  step: number;
}

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
