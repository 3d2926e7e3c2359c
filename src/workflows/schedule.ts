import * as chrono from 'chrono-node';
import { CronExpressionParser } from 'cron-parser';
import cronstrue from 'cronstrue';
import * as rruleModule from 'rrule';
import type { Options } from 'rrule';

// rrule ships CommonJS whose named exports Node's ESM loader cannot see; they sit on `default` there.
type RRuleModule = typeof import('rrule');
const rrule = ((rruleModule as RRuleModule & { default?: RRuleModule }).default ?? rruleModule) as RRuleModule;
const { Frequency, RRule } = rrule;

/**
 * What BullMQ's job scheduler is given: a cron `pattern` in the account's time zone, or a fixed
 * interval `every` (ms) from `startDate` for cadences cron cannot say (every 7 minutes, every 2 weeks).
 */
export interface Schedule {
  pattern?: string;
  every?: number;
  startDate?: number;
  tz: string;
}

export type Resolution = { ok: true; schedule: Schedule; echo: string; nextRunAt: number } | { ok: false; error: string };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
/** Default time of day when the words name none: 09:00 in the account's time zone. */
const DEFAULT_TIME = { hour: 9, minute: 0 };

/**
 * Everyday phrasings rewritten into the words rrule's grammar reads. This is a table of synonyms,
 * not a grammar: rrule parses the recurrence and chrono the times of day.
 */
const SYNONYMS: Array<[RegExp, string]> = [
  [/\beach\b/g, 'every'],
  [/\btwice a day\b|\btwice daily\b/g, 'every day at 9am and 5pm'],
  [/\btwice a week\b/g, 'every monday and thursday'],
  [/\bevery morning\b/g, 'every day at 9am'],
  [/\bevery afternoon\b/g, 'every day at 3pm'],
  [/\bevery evening\b/g, 'every day at 6pm'],
  [/\bevery night\b|\bnightly\b/g, 'every day at 9pm'],
  [/\bin the morning\b/g, 'at 9am'],
  [/\bin the afternoon\b/g, 'at 3pm'],
  [/\bin the evening\b/g, 'at 6pm'],
  [/\bdaily\b/g, 'every day'],
  [/\bhourly\b/g, 'every hour'],
  [/\bweekly\b/g, 'every week'],
  [/\bbiweekly\b|\bfortnightly\b|\bevery fortnight\b/g, 'every 2 weeks'],
  [/\bmonthly\b/g, 'every month'],
  [/\bquarterly\b|\bevery quarter\b/g, 'every 3 months'],
  [/\byearly\b|\bannually\b/g, 'every year'],
  [/\bevery other (minute|hour|day|week|month)\b/g, 'every 2 $1s'],
  [/\b(every |on )?weekends?\b/g, 'every saturday and sunday'],
  [/\b(every |on )?weekdays\b/g, 'every weekday'],
  [/\b(every |on )?business days\b/g, 'every weekday'],
  [/\b(mon|tues|wednes|thurs|fri|satur|sun)days\b/g, '$1day'],
  [/\bmins?\b/g, 'minutes'],
  [/\bhrs?\b/g, 'hours'],
];

/** "first monday of every month" → "every month on the first monday" (rrule's word order). */
const OF_EVERY_MONTH = /^(?:on )?(?:the )?(.+?) of (?:every|the) month$/;

function normalise(text: string): string {
  // Trimmed before the closing stop is cut: "daily at noon. " ends in a space, not the stop.
  let s = ` ${text
    .toLowerCase()
    .trim()
    .replace(/[.!]+$/, '')
    .replace(/\s+/g, ' ')
    .trim()} `;
  for (const [from, to] of SYNONYMS) s = s.replace(from, to);
  return s.replace(/\s+/g, ' ').trim();
}

interface TimeOfDay {
  hour: number;
  minute: number;
}

/** Times of day found by chrono; returns them and the words that remain once they are cut out. */
function extractTimes(text: string): { times: TimeOfDay[]; rest: string } {
  const ref = new Date(Date.UTC(2026, 0, 5, 0, 0, 0));
  let rest = text;
  const times: TimeOfDay[] = [];
  for (const r of chrono.parse(text, ref).reverse()) {
    if (!r.start.isCertain('hour')) continue;
    // A span may carry a weekday too ("thursday at 4pm"): cut from where the time itself begins.
    const at = r.text.search(/(at\s+)?(\d|noon|midnight)/);
    if (at < 0) continue;
    times.unshift({ hour: r.start.get('hour') ?? 0, minute: r.start.get('minute') ?? 0 });
    rest = `${rest.slice(0, r.index + at)} ${rest.slice(r.index + r.text.length)}`;
  }
  rest = rest
    .replace(/\b(at|and|,)\s*(?=(and|,)?\s*$)/g, ' ')
    .replace(/\s+(at|and)\s*$/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return { times, rest };
}

function recurrenceWords(rest: string): string {
  let s = rest
    .replace(/^(at|and|,)\s+/, '')
    .replace(/\s+(and|,)$/, '')
    .trim();
  const ofMonth = OF_EVERY_MONTH.exec(s);
  if (ofMonth) s = `every month on the ${ofMonth[1]}`;
  if (!s) return 'every day';
  if (!s.startsWith('every')) s = `every ${s.replace(/^on /, '')}`;
  return s;
}

/** rrule can stop reading early; every day and month the words name must survive into its reading. */
function namesSurvive(words: string, options: Partial<Options>): boolean {
  const reading = new RRule(options).toText().toLowerCase();
  const named = [...DAYS, ...MONTHS].filter((n) => new RegExp(`\\b${n}\\b`).test(words));
  const weekday = /\bweekday\b/.test(words);
  return named.every((n) => reading.includes(n)) && (!weekday || reading.includes('weekday'));
}

const cronDay = (rruleWeekday: number) => (rruleWeekday + 1) % 7; // rrule: 0 = Monday; cron: 0 = Sunday

function weekdaysOf(options: Partial<Options>): Array<{ weekday: number; n?: number }> {
  const list = options.byweekday;
  if (list === null || list === undefined) return [];
  const arr = Array.isArray(list) ? list : [list];
  return arr.map((d) => {
    if (typeof d === 'number') return { weekday: d };
    if (typeof d === 'string') return { weekday: ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'].indexOf(d) };
    return { weekday: d.weekday, n: d.n ?? undefined };
  });
}

const numbers = (v: number | number[] | null | undefined): number[] => (v === null || v === undefined ? [] : Array.isArray(v) ? v : [v]);

type Compiled = { pattern: string } | { every: number; anchorPattern?: string } | { error: string };

function compile(options: Partial<Options>, times: TimeOfDay[]): Compiled {
  const interval = options.interval ?? 1;
  const minutes = [...new Set(times.map((t) => t.minute))];
  if (minutes.length > 1)
    return { error: 'the times of day must share their minutes (09:00 and 17:00, not 09:30 and 17:00); make one workflow per time' };
  const minute = minutes[0] ?? DEFAULT_TIME.minute;
  const hours = times.length ? [...new Set(times.map((t) => t.hour))].sort((a, b) => a - b).join(',') : String(DEFAULT_TIME.hour);
  const days = weekdaysOf(options);
  switch (options.freq) {
    case Frequency.MINUTELY:
      if (times.length) return { error: 'an every-few-minutes schedule cannot also name a time of day' };
      return 60 % interval === 0 ? { pattern: interval === 1 ? '* * * * *' : `*/${interval} * * * *` } : { every: interval * MINUTE };
    case Frequency.HOURLY:
      if (times.length) return { error: 'an hourly schedule cannot also name a time of day' };
      return 24 % interval === 0 ? { pattern: `0 ${interval === 1 ? '*' : `*/${interval}`} * * *` } : { every: interval * HOUR };
    case Frequency.DAILY:
      return { pattern: `${minute} ${hours} ${interval === 1 ? '*' : `*/${interval}`} * *` };
    case Frequency.WEEKLY: {
      const dow = (days.length ? days : [{ weekday: 0 }])
        .map((d) => cronDay(d.weekday))
        .sort((a, b) => a - b)
        .join(',');
      const pattern = `${minute} ${hours} * * ${dow}`;
      if (interval === 1) return { pattern };
      if (dow.includes(',') || hours.includes(',')) return { error: `every ${interval} weeks can name one day and one time` };
      return { every: interval * 7 * DAY, anchorPattern: pattern };
    }
    case Frequency.MONTHLY: {
      const month = interval === 1 ? '*' : `*/${interval}`;
      const nth = days.find((d) => d.n !== undefined);
      if (nth) {
        if (days.length > 1) return { error: 'a monthly schedule can name one weekday of the month' };
        const dow = cronDay(nth.weekday);
        if (nth.n === -1) return { pattern: `${minute} ${hours} * ${month} ${dow}L` };
        if (nth.n! < 1 || nth.n! > 5) return { error: 'a weekday of the month must be the first to fifth, or the last' };
        return { pattern: `${minute} ${hours} * ${month} ${dow}#${nth.n}` };
      }
      const dom = numbers(options.bymonthday).map((d) => (d === -1 ? 'L' : String(d)));
      if (dom.some((d) => d !== 'L' && Number(d) < 1)) return { error: 'a day of the month must be 1 to 31, or the last day' };
      return { pattern: `${minute} ${hours} ${dom.length ? dom.join(',') : '1'} ${month} *` };
    }
    case Frequency.YEARLY: {
      const months = numbers(options.bymonth);
      const dom = numbers(options.bymonthday);
      return { pattern: `${minute} ${hours} ${dom.length ? dom.join(',') : '1'} ${months.length ? months.join(',') : '1'} *` };
    }
    default:
      return { error: 'schedules run at most once a minute' };
  }
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function nextCron(pattern: string, tz: string, now: number): number {
  return CronExpressionParser.parse(pattern, { currentDate: new Date(now), tz })
    .next()
    .getTime();
}

const unit = (ms: number): string => {
  for (const [size, name] of [
    [7 * DAY, 'week'],
    [DAY, 'day'],
    [HOUR, 'hour'],
    [MINUTE, 'minute'],
  ] as const) {
    if (ms % size === 0) return `${ms / size} ${name}s`;
  }
  return `${ms} ms`;
};

/**
 * Reads a schedule in plain words (`every weekday at 9am`) in the account's time zone: the recurrence
 * by rrule's text parser, the times of day by chrono, the canonical echo by cronstrue, and the next
 * run by the same cron-parser BullMQ's job schedulers use. Words it cannot read give `ok: false` with
 * a sentence for the person who wrote them; nothing is guessed.
 */
export function resolveSchedule(text: string, tz: string, now: number = Date.now()): Resolution {
  if (!isTimeZone(tz)) return { ok: false, error: `the account's time zone ${tz} is not a known time zone` };
  const words = normalise(text);
  const hint = 'try words such as "every weekday at 9am", "Mondays at 8:30" or "every 2 hours"';
  if (!words) return { ok: false, error: `could not understand an empty schedule; ${hint}` };
  const { times, rest } = extractTimes(words);
  const recurrence = recurrenceWords(rest);
  let options: Partial<Options> | null = null;
  try {
    options = RRule.parseText(recurrence);
  } catch {
    options = null;
  }
  if (!options || !namesSurvive(recurrence, options)) return { ok: false, error: `could not understand "${text.trim()}"; ${hint}` };
  const compiled = compile(options, times);
  if ('error' in compiled) return { ok: false, error: compiled.error };
  const zone = tz === 'UTC' ? 'UTC' : `${tz} time`;
  if ('pattern' in compiled) {
    const echo = `${cronstrue.toString(compiled.pattern, { use24HourTimeFormat: true, verbose: false })} (${zone})`;
    return { ok: true, schedule: { pattern: compiled.pattern, tz }, echo, nextRunAt: nextCron(compiled.pattern, tz, now) };
  }
  if (compiled.anchorPattern) {
    const startDate = nextCron(compiled.anchorPattern, tz, now);
    const echo =
      `Every ${unit(compiled.every)}, ` +
      `${cronstrue.toString(compiled.anchorPattern, { use24HourTimeFormat: true }).replace(/^At /, 'at ')} (${zone})`;
    return { ok: true, schedule: { every: compiled.every, startDate, tz }, echo, nextRunAt: startDate };
  }
  const startDate = Math.floor(now / compiled.every) * compiled.every + compiled.every;
  return { ok: true, schedule: { every: compiled.every, startDate, tz }, echo: `Every ${unit(compiled.every)}`, nextRunAt: startDate };
}

/**
 * The next `count` times a resolved schedule fires after `now`, as BullMQ's job scheduler would fire it: a cron
 * pattern read by the same cron-parser, an interval counted from its start. What the dashboard shows before a
 * workflow is saved.
 */
export function upcomingRuns(schedule: Schedule, count: number, now: number = Date.now()): number[] {
  if (schedule.pattern) {
    const it = CronExpressionParser.parse(schedule.pattern, { currentDate: new Date(now), tz: schedule.tz });
    return Array.from({ length: count }, () => it.next().getTime());
  }
  const every = schedule.every!;
  const start = schedule.startDate ?? now;
  const first = start > now ? start : start + (Math.floor((now - start) / every) + 1) * every;
  return Array.from({ length: count }, (_, i) => first + i * every);
}
