/**
 * Send windows (docs/decisions/experiments.md, "What can vary: the send window"): a time of day, `HH:MM–HH:MM` in a
 * named IANA time zone, inside which a mail goes out. A window may cross midnight (22:00–02:00); its start is in it,
 * its end is not. Pure: a window's text, whether it is open at an instant, and when it next opens.
 */

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
