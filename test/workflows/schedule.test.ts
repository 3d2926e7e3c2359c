import { getNextMillis } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { resolveSchedule, upcomingRuns } from '../../src/workflows/schedule.js';

// Sunday 22 November 2026, 12:00 UTC; London is on UTC in November.
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const LONDON = 'Europe/London';
const WEEKDAYS = 'only on Monday, Tuesday, Wednesday, Thursday, and Friday';

/** [words people write, cron pattern (or interval ms), canonical echo without the zone, next run (UTC)] */
const TABLE: Array<[string, string | number, string, string]> = [
  ['every weekday at 9am', '0 9 * * 1,2,3,4,5', `At 09:00, ${WEEKDAYS}`, '2026-11-23T09:00'],
  ['Mondays at 8:30', '30 8 * * 1', 'At 08:30, only on Monday', '2026-11-23T08:30'],
  ['daily at noon', '0 12 * * *', 'At 12:00', '2026-11-23T12:00'],
  ['every 2 hours', '0 */2 * * *', 'On the hour, every 2 hours', '2026-11-22T14:00'],
  ['twice a day', '0 9,17 * * *', 'At 09:00 and 17:00', '2026-11-22T17:00'],
  ['first Monday of every month at 10:00', '0 10 * * 1#1', 'At 10:00, on the first Monday of the month', '2026-12-07T10:00'],
  ['every Tuesday and Thursday at 4pm', '0 16 * * 2,4', 'At 16:00, only on Tuesday and Thursday', '2026-11-24T16:00'],
  ['hourly', '0 * * * *', 'Every hour', '2026-11-22T13:00'],
  ['every day at 9:00', '0 9 * * *', 'At 09:00', '2026-11-23T09:00'],
  ['every monday at 9am', '0 9 * * 1', 'At 09:00, only on Monday', '2026-11-23T09:00'],
  ['every 15 minutes', '*/15 * * * *', 'Every 15 minutes', '2026-11-22T12:15'],
  ['every week on Friday at 17:00', '0 17 * * 5', 'At 17:00, only on Friday', '2026-11-27T17:00'],
  ['weekly', '0 9 * * 1', 'At 09:00, only on Monday', '2026-11-23T09:00'],
  ['monthly', '0 9 1 * *', 'At 09:00, on day 1 of the month', '2026-12-01T09:00'],
  ['every weekend at 10am', '0 10 * * 0,6', 'At 10:00, only on Sunday and Saturday', '2026-11-28T10:00'],
  ['at 9:00 am every day', '0 9 * * *', 'At 09:00', '2026-11-23T09:00'],
  ['every day at 6pm', '0 18 * * *', 'At 18:00', '2026-11-22T18:00'],
  ['every month on the 1st at 9am', '0 9 1 * *', 'At 09:00, on day 1 of the month', '2026-12-01T09:00'],
  ['every 30 minutes', '*/30 * * * *', 'Every 30 minutes', '2026-11-22T12:30'],
  ['every hour', '0 * * * *', 'Every hour', '2026-11-22T13:00'],
  ['every morning', '0 9 * * *', 'At 09:00', '2026-11-23T09:00'],
  ['every evening', '0 18 * * *', 'At 18:00', '2026-11-22T18:00'],
  ['every Friday', '0 9 * * 5', 'At 09:00, only on Friday', '2026-11-27T09:00'],
  ['every Sunday at 8pm', '0 20 * * 0', 'At 20:00, only on Sunday', '2026-11-22T20:00'],
  ['on weekdays at 8:00', '0 8 * * 1,2,3,4,5', `At 08:00, ${WEEKDAYS}`, '2026-11-23T08:00'],
  ['every 3 days', '0 9 */3 * *', 'At 09:00, every 3 days in a month', '2026-11-25T09:00'],
  ['last day of the month', '0 9 L * *', 'At 09:00, on the last day of the month', '2026-11-30T09:00'],
  ['every quarter', '0 9 1 */3 *', 'At 09:00, on day 1 of the month, every 3 months', '2027-01-01T09:00'],
  ['at midnight', '0 0 * * *', 'At 00:00', '2026-11-23T00:00'],
  ['every tuesday', '0 9 * * 2', 'At 09:00, only on Tuesday', '2026-11-24T09:00'],
  ['every 6 hours', '0 */6 * * *', 'On the hour, every 6 hours', '2026-11-22T18:00'],
  ['daily', '0 9 * * *', 'At 09:00', '2026-11-23T09:00'],
  ['every minute', '* * * * *', 'Every minute', '2026-11-22T12:01'],
  ['every Wednesday at 2:30pm', '30 14 * * 3', 'At 14:30, only on Wednesday', '2026-11-25T14:30'],
  ['twice a week', '0 9 * * 1,4', 'At 09:00, only on Monday and Thursday', '2026-11-23T09:00'],
  ['the 15th of every month', '0 9 15 * *', 'At 09:00, on day 15 of the month', '2026-12-15T09:00'],
  ['every January on the 1st', '0 9 1 1 *', 'At 09:00, on day 1 of the month, only in January', '2027-01-01T09:00'],
  ['last Friday of the month at 16:00', '0 16 * * 5L', 'At 16:00, on the last Friday of the month', '2026-11-27T16:00'],
  ['business days at 7:30am', '30 7 * * 1,2,3,4,5', `At 07:30, ${WEEKDAYS}`, '2026-11-23T07:30'],
  ['each day at 5pm', '0 17 * * *', 'At 17:00', '2026-11-22T17:00'],
  ['every Monday, Wednesday and Friday at 9am', '0 9 * * 1,3,5', 'At 09:00, only on Monday, Wednesday, and Friday', '2026-11-23T09:00'],
  ['every day at 9am and 5pm', '0 9,17 * * *', 'At 09:00 and 17:00', '2026-11-22T17:00'],
  ['Every weekday at 9AM.', '0 9 * * 1,2,3,4,5', `At 09:00, ${WEEKDAYS}`, '2026-11-23T09:00'],
  ['every 7 minutes', 7 * 60_000, 'Every 7 minutes', '2026-11-22T12:07'],
  ['every other week', 14 * 86_400_000, 'Every 2 weeks, at 09:00, only on Monday', '2026-11-23T09:00'],
  ['every 2 weeks on Monday at 10am', 14 * 86_400_000, 'Every 2 weeks, at 10:00, only on Monday', '2026-11-23T10:00'],
];

describe('plain-words schedules', () => {
  // nextRunAt is only true if it is when BullMQ's job scheduler, given the same schedule, fires next.
  it.each(TABLE.filter(([, pattern]) => typeof pattern === 'string'))('gives %j the next run the job scheduler computes', (words) => {
    const r = resolveSchedule(words, LONDON, NOW);
    if (!r.ok) throw new Error(`${words}: ${r.error}`);
    expect(r.nextRunAt).toBe(getNextMillis(NOW, { pattern: r.schedule.pattern, tz: r.schedule.tz }));
    // And the firing after that is the scheduler's too: the cadence, not only the first time, is right.
    expect(resolveSchedule(words, LONDON, r.nextRunAt)).toMatchObject({
      nextRunAt: getNextMillis(r.nextRunAt, { pattern: r.schedule.pattern, tz: r.schedule.tz }),
    });
  });

  it.each(TABLE)('reads %j the same in capitals, with extra spaces and a full stop', (words) => {
    const plain = resolveSchedule(words, LONDON, NOW);
    const shouted = resolveSchedule(`  ${words.toUpperCase().replace(/ /g, '  ')}. `, LONDON, NOW);
    expect(shouted).toEqual(plain);
  });

  it.each(TABLE)('reads %j', (words, pattern, echo, next) => {
    const r = resolveSchedule(words, LONDON, NOW);
    if (!r.ok) throw new Error(`${words}: ${r.error}`);
    if (typeof pattern === 'string') expect(r.schedule.pattern).toBe(pattern);
    else expect(r.schedule.every).toBe(pattern);
    expect(r.schedule.tz).toBe(LONDON);
    // A fixed interval runs the same in every zone; only calendar schedules name theirs.
    expect(r.echo).toBe(echo === 'Every 7 minutes' ? echo : `${echo} (Europe/London time)`);
    expect(new Date(r.nextRunAt).toISOString()).toBe(`${next}:00.000Z`);
  });

  it('reads times in the account time zone, across a daylight-saving change', () => {
    const ny = resolveSchedule('every day at 9am', 'America/New_York', NOW);
    // 12:00 UTC is 07:00 in New York, so 09:00 there is 14:00 UTC the same day.
    expect(ny.ok && new Date(ny.nextRunAt).toISOString()).toBe('2026-11-22T14:00:00.000Z');
    // 28 March 2027: London moves to BST on the 28th, so 09:00 local is 08:00 UTC from then on.
    const beforeChange = Date.UTC(2027, 2, 28, 0, 30);
    const bst = resolveSchedule('every day at 9am', LONDON, beforeChange);
    expect(bst.ok && new Date(bst.nextRunAt).toISOString()).toBe('2027-03-28T08:00:00.000Z');
  });

  it.each([
    ['banana', /could not understand "banana"/],
    ['every blorp', /could not understand/],
    ['at 25:00', /could not understand/],
    ['whenever you feel like it', /could not understand/],
    ['every 90 seconds', /could not understand/],
    ['every weekday and saturday', /could not understand/],
    ['', /could not understand an empty schedule/],
    ['9:30 and 5pm daily', /times of day must share their minutes/],
    ['every 15 minutes at 9am', /cannot also name a time of day/],
  ])('gives a scheduleError for %j', (words, error) => {
    const r = resolveSchedule(words, LONDON, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(error);
  });

  // The dashboard's preview: the next five runs are the job scheduler's next five firings, the first nextRunAt.
  it.each(TABLE)('lists the next five runs of %j as the job scheduler fires them', (words) => {
    const r = resolveSchedule(words, LONDON, NOW);
    if (!r.ok) throw new Error(`${words}: ${r.error}`);
    const runs = upcomingRuns(r.schedule, 5, NOW);
    expect(runs).toHaveLength(5);
    expect(runs[0]).toBe(r.nextRunAt);
    for (let i = 1; i < 5; i++) {
      const { pattern, every, tz } = r.schedule;
      expect(runs[i]).toBe(pattern ? getNextMillis(runs[i - 1]!, { pattern, tz }) : runs[i - 1]! + every!);
    }
  });

  it('refuses an unknown time zone rather than guessing one', () => {
    const r = resolveSchedule('daily', 'Mars/Olympus_Mons', NOW);
    expect(r).toEqual({ ok: false, error: "the account's time zone Mars/Olympus_Mons is not a known time zone" });
  });
});
