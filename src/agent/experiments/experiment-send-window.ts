/**
 * The send-window thing of an experiment (docs/decisions/experiments.md, "What can vary: the send window"): its
 * variants are 2 to 4 windows of the day in one named time zone (src/experiments/send-window.ts). The maintenance
 * pass drafts a contact's mail only while its variant's window is open, and the mail card carries the window, so
 * the shipping path holds it until the window opens when it is approved outside it (src/shipping/send-window-hold.ts).
 * An adopted window rides on later mail about the topic the same way.
 */
import type { Experiment, Thing } from '../../experiments/experiments.repository.js';
import { checkWindows, isOpen, parseWindow } from '../../experiments/send-window.js';

/** The variants whose window is open at `now` (indexes), or undefined when the experiment varies no window. */
export function openVariants(e: Pick<Experiment, 'thing' | 'plan'>, now: number): number[] | undefined {
  if (e.thing !== 'send_window') return undefined;
  return e.plan.variants.flatMap((v, i) => {
    const w = parseWindow(v.value);
    return typeof w !== 'string' && isOpen(w, now) ? [i] : [];
  });
}

/** What a mail card of this variant carries beside its text: its send window, for a send-window experiment. */
export const windowFor = (e: Pick<Experiment, 'thing'>, variant: { value: string }): { sendWindow?: string } =>
  e.thing === 'send_window' ? { sendWindow: variant.value } : {};

/** The variants' values: the windows checked together (a string says why they are refused), or control and challengers. */
export function variantValues(
  input: { thing: Thing; challengers: (string | number)[]; windows?: string[]; timeZone?: string },
  control: string,
): string[] | string {
  if (input.thing === 'send_window') return checkWindows(input.windows ?? [], input.timeZone);
  return [control.trim(), ...input.challengers.map((c) => String(c).trim())];
}

/** Ship-tool arguments with an adopted window in their details (the card then waits for it: send-window-hold.ts). */
export function withAdoptedWindow<A extends { details?: Record<string, unknown> }>(args: A, values: Partial<Record<Thing, string>>): A {
  const sendWindow = values.send_window;
  return sendWindow ? { ...args, details: { ...args.details, sendWindow } } : args;
}

/** What the experiment's card says of its windows, after the plan (nothing for another thing). */
export const windowsNote = (thing: Thing): string =>
  thing === 'send_window'
    ? "\nEach contact's mail is drafted while its variant's window is open and goes out only inside it: approved outside " +
      'it, it waits, approved, for the window to open. A mail that still went out outside its window is not counted.'
    : '';
