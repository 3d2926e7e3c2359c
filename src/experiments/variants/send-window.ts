/**
 * `send_window` (docs/decisions/experiments.md, "What can vary: the send window"): the variants are 2 to 4 windows of
 * the day, `HH:MM–HH:MM` in one named IANA time zone, inside which a contact's mail goes out. A window may cross midnight
 * (22:00–02:00); its start is in it, its end is not. The maintenance pass drafts a contact's mail only while its
 * variant's window is open, and the mail card carries the window, so the shipping path holds it until the window opens
 * when it is approved outside it (the hold rule handed to shipping, `sendWindowHold`); a mail that still went out
 * outside it is not counted (the exposure handed to shipping, `exposeExperimentMail`). An adopted window rides on later
 * mail about the topic the same way.
 */
import type { Queryable } from '../../db.js';
import type { Experiment, Thing } from '../experiment.js';
import { experimentRows } from '../experiment-rows.js';
import { adoptAsDefault, type ContactKind } from './kind.js';

/** A window as stored on a variant, a default and a mail card: "09:00–11:00 Europe/Berlin". */
export interface SendWindow {
  /** Minutes after local midnight. */
  start: number;
  end: number;
  zone: string;
}

/** The shortest window: shorter ones leave too little room for a send that waits on the mail service. */
export const MIN_WINDOW_MINUTES = 30;
const DAY = 24 * 60;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's formatter, or null for a zone Intl does not know (or an offset such as "+02:00", which is no place's name). */
function formatFor(zone: string): Intl.DateTimeFormat | null {
  let f = formats.get(zone);
  if (f) return f;
  if (!zone || /^[+-]/.test(zone)) return null;
  try {
    f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  } catch {
    return null;
  }
  formats.set(zone, f);
  return f;
}

/**
 * The zone as Intl spells it when only the case differs ("utc" → "UTC"), else as given (an alias such as
 * Asia/Kolkata stays as the agent wrote it); null when it is not a time zone Intl knows by name.
 */
export function knownZone(zone: string): string | null {
  const given = zone.trim();
  const resolved = formatFor(given)?.resolvedOptions().timeZone;
  if (!resolved) return null;
  return resolved.toLowerCase() === given.toLowerCase() ? resolved : given;
}

/** Minutes after midnight as a clock reads them: 540 → "09:00". */
export const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

/** A window's text: "09:00–11:00 Europe/Berlin". */
export const windowText = (w: SendWindow) => `${hhmm(w.start)}–${hhmm(w.end)} ${w.zone}`;

/** Its length in minutes (a window crossing midnight wraps). */
export const windowMinutes = (w: SendWindow) => (w.end - w.start + DAY) % DAY;

/**
 * Reads "HH:MM–HH:MM" (an en dash or a hyphen), in `zone`, or the zone named after it ("09:00–11:00 Europe/Berlin").
 * A string back says what is wrong.
 */
export function parseWindow(text: string, zone?: string): SendWindow | string {
  const [times = '', named] = text.trim().split(/\s+/, 2);
  const parts = times.split(/[–-]/);
  const [start, end] = parts.map((p) => TIME.exec(p.trim()));
  if (parts.length !== 2 || !start || !end) return `"${text}" is not a window written HH:MM–HH:MM`;
  const z = knownZone(named ?? zone ?? 'UTC');
  if (!z) return `"${named ?? zone}" is not a time zone name (use an IANA name such as Europe/Berlin)`;
  return { start: Number(start[1]) * 60 + Number(start[2]), end: Number(end[1]) * 60 + Number(end[2]), zone: z };
}

/** The local time of day at `at` in the window's zone, in minutes after midnight. */
export function minuteOfDay(zone: string, at: number): number {
  const parts = formatFor(zone)!.formatToParts(new Date(at));
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return n('hour') * 60 + n('minute');
}

/** Whether the window is open at `at`. */
export function isOpen(w: SendWindow, at: number): boolean {
  const m = minuteOfDay(w.zone, at);
  return w.start < w.end ? m >= w.start && m < w.end : m >= w.start || m < w.end;
}

/**
 * When the window next opens at or after `at` (`at` itself when it is open): its start on the local clock. The guess
 * (today's offset from UTC) is corrected by the local clock when a clock change lies between; a start a
 * spring-forward skipped opens at the first minute after it that is in the window.
 */
export function nextOpening(w: SendWindow, at: number): number {
  if (isOpen(w, at)) return at;
  const ahead = (w.start - minuteOfDay(w.zone, at) + DAY) % DAY;
  let t = Math.floor(at / 60_000) * 60_000 + ahead * 60_000;
  for (let i = 0; i < 3; i++) {
    const off = ((w.start - minuteOfDay(w.zone, t) + DAY + DAY / 2) % DAY) - DAY / 2;
    if (off === 0) break;
    t += off * 60_000;
  }
  if (t >= at && isOpen(w, t) && !isOpen(w, t - 60_000)) return t;
  // No local minute reads its start today: the first open minute from a few hours before the guess.
  t = Math.max(Math.ceil(at / 60_000) * 60_000, t - 3 * 3_600_000);
  for (let i = 0; i < DAY + 360 && !isOpen(w, t); i++) t += 60_000;
  return t;
}

/**
 * The windows of a send-window experiment, checked together: 2 to 4, each at least MIN_WINDOW_MINUTES long, no two
 * sharing a minute, all in one zone (the plan's). Each back as its text; a string says why the set is refused.
 */
export function checkWindows(texts: readonly string[], zone?: string): string[] | string {
  if (texts.length < 2 || texts.length > 4) return 'a send-window experiment compares 2 to 4 windows';
  const windows: SendWindow[] = [];
  for (const t of texts) {
    const w = parseWindow(t, zone);
    if (typeof w === 'string') return w;
    if (windowMinutes(w) < MIN_WINDOW_MINUTES) return `the window ${windowText(w)} is shorter than ${MIN_WINDOW_MINUTES} minutes`;
    windows.push(w);
  }
  if (new Set(windows.map((w) => w.zone)).size > 1) return 'every window of one experiment is in the same time zone';
  const taken = new Array<number>(DAY).fill(-1);
  for (const [i, w] of windows.entries()) {
    for (let k = 0; k < windowMinutes(w); k++) {
      const m = (w.start + k) % DAY;
      if (taken[m]! >= 0) return `the windows ${windowText(windows[taken[m]!]!)} and ${windowText(w)} overlap`;
      taken[m] = i;
    }
  }
  return windows.map(windowText);
}

/** The send window a mail card carries (`payload.sendWindow`), when it has one that reads. */
export function windowOf(card: { payload: Record<string, unknown> }): { text: string; window: SendWindow } | null {
  const text = card.payload.sendWindow;
  if (typeof text !== 'string') return null;
  const window = parseWindow(text);
  return typeof window === 'string' ? null : { text, window };
}

/**
 * The hold rule the composition roots hand to shipping (src/shipping/hold-rule.ts): a mail card that carries a send
 * window waits while its window is closed, until it next opens. Null when the card has no window or it is open at
 * `now`; else when it goes out and why, in words.
 */
export async function sendWindowHold(
  card: { payload: Record<string, unknown> },
  now: number,
): Promise<{ sendAt: number; window: string; note: string } | null> {
  const w = windowOf(card);
  if (!w || isOpen(w.window, now)) return null;
  const sendAt = nextOpening(w.window, now);
  const local = `${hhmm(minuteOfDay(w.window.zone, now))} ${w.window.zone}`;
  const note =
    `Approved at ${local}, outside its send window ${w.text}: it waits, approved, and goes out when the window opens ` +
    `(${new Date(sendAt).toISOString()}). Dismiss or snooze it to stop that.`;
  return { sendAt, window: w.text, note };
}

/** The on-sent hook handed to shipping (src/shipping/hold-rule.ts): a mail of an experiment exposes its contact. */
export async function exposeExperimentMail(
  q: Queryable,
  accountId: string,
  card: { id: string; payload: Record<string, unknown> },
  at: number,
): Promise<void> {
  // Its contact is exposed to the variant it was assigned before the mail was drafted (not outside its window).
  if (typeof card.payload.experimentId === 'string') await exposeSent(q, accountId, card, at);
}

/** The mail of `card` went out at `at`: its contact exposed (the first send counts), unless outside the card's window. */
export async function exposeSent(q: Queryable, accountId: string, card: { id: string; payload: Record<string, unknown> }, at: number) {
  const w = windowOf(card);
  if (w && !isOpen(w.window, at)) {
    const zone = w.window.zone;
    await q('experiment_assignments')
      .where({ account_id: accountId, card_id: card.id })
      .whereNull('exposed_at')
      .whereNull('skipped')
      .update({ skipped: `sent at ${hhmm(minuteOfDay(zone, at))} ${zone}, outside its window ${w.text}`.slice(0, 200) });
    return;
  }
  await experimentRows(q).exposed(accountId, card.id, at);
}

/** The variants whose window is open at `now` (indexes). */
export function openVariants(e: Pick<Experiment, 'plan'>, now: number): number[] {
  return e.plan.variants.flatMap((v, i) => {
    const w = parseWindow(v.value);
    return typeof w !== 'string' && isOpen(w, now) ? [i] : [];
  });
}

/** Ship-tool arguments with an adopted window in their details (the card then waits for it: send-window-hold.ts). */
export function withAdoptedWindow<A extends { details?: Record<string, unknown> }>(args: A, values: Partial<Record<Thing, string>>): A {
  const sendWindow = values.send_window;
  return sendWindow ? { ...args, details: { ...args.details, sendWindow } } : args;
}

export const sendWindow: ContactKind<'send_window'> = {
  thing: 'send_window',
  reaches: 'contacts',
  work: 'email',
  words: 'the time of day the mail is sent',
  startedWorkWaits: 'its mail waits under the email settings',
  // Exposures come window by window: only what will never come says anything of the split.
  ratio: 'kept',
  replans: true,
  variants: (input) => {
    const values = checkWindows(input.windows ?? [], input.timeZone);
    return typeof values === 'string' ? values : { values };
  },
  afterPlan:
    "\nEach contact's mail is drafted while its variant's window is open and goes out only inside it: approved outside " +
    'it, it waits, approved, for the window to open. A mail that still went out outside its window is not counted.',
  // The text stays as it is; the card carries its window.
  mail: (e, variant) => ({ subject: e.draft.subject, body: e.draft.body, details: { sendWindow: variant.value } }),
  openVariants,
  adopt: (db, e, value, at) => adoptAsDefault(db, e, at, () => value),
};
