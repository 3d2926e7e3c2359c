import type { Queryable } from '../../db.js';
import { CHANNELS, type Channel } from '../channel-events.js';
import { resultsRepository } from '../results.repository.js';
import { rollupsRepository } from '../rollups.repository.js';
import { addToTally, emptyTally, hasMeasurementSource, isAvailable, metrics, type Tally, unavailableReason } from './results.service.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The scoreboard's windows over time (docs/decisions/results.md, "Figures over time"): the last 24 hours by the hour, the
 * last 7 and 30 days by the UTC day, each ending with the bucket in progress.
 */
export const SERIES_WINDOWS = {
  '24h': { step: HOUR, buckets: 24, by: 'hour' },
  '7d': { step: DAY, buckets: 7, by: 'day' },
  '30d': { step: DAY, buckets: 30, by: 'day' },
} as const;
export type SeriesWindow = keyof typeof SERIES_WINDOWS;

/** What a figure counts: events (`count`), a share of two counts (`rate`), or a sum of amounts (`amount`, minor units). */
export type FigureKind = 'count' | 'rate' | 'amount';
const KINDS: Record<string, FigureKind> = { replyRate: 'rate', spend: 'amount', costPerConversion: 'amount' };

/** One figure per bucket; null is unknown (never zero), as in `/results`. */
export interface SeriesFigure {
  key: string;
  kind: FigureKind;
  values: (number | null)[];
}

export type SeriesChannel = { available: true; figures: SeriesFigure[] } | { available: false; reason: string };

export interface Series {
  window: SeriesWindow;
  by: 'hour' | 'day';
  since: number;
  until: number;
  /** Each bucket's start, epoch ms; the last one is in progress. */
  buckets: number[];
  channels: Record<Channel, SeriesChannel>;
}

/** The figures of a channel's metrics that are one number (its `shipped` split, conversion values and ad tests are not). */
const figuresOf = (m: ReturnType<typeof metrics>) =>
  Object.entries(m).filter((e): e is [string, number | null] => e[1] === null || typeof e[1] === 'number');

/**
 * Each channel's `/results` figures per bucket of `window`, from the hourly rollups and the events not folded yet, for
 * one account. A channel the account has not connected carries `/results`' reason instead. `returnPath`: whether replies
 * and bounces can reach the service (`hasReturnPath`); without it they are unknown (null) in every bucket.
 */
export async function getSeries(q: Queryable, accountId: string, window: SeriesWindow, returnPath: boolean, now = Date.now()) {
  const { step, buckets: count, by } = SERIES_WINDOWS[window];
  const last = Math.floor(now / step) * step;
  const since = last - (count - 1) * step;
  const buckets = Array.from({ length: count }, (_, i) => since + i * step);
  const mark = await rollupsRepository(q).watermark();
  const repo = resultsRepository(q);
  const [rows, connected, measuring] = await Promise.all([
    repo.bucketTally(accountId, since, last + step, step, mark.xid),
    repo.connected(accountId),
    hasMeasurementSource(q, accountId),
  ]);
  const tallies = new Map<string, Tally>();
  const tally = (channel: string, i: number) => {
    const key = `${channel}:${i}`;
    if (!tallies.has(key)) tallies.set(key, emptyTally());
    return tallies.get(key)!;
  };
  for (const r of rows) addToTally(tally(r.channel, (Number(r.bucket) - since) / step), r);
  const channel = (c: Channel): SeriesChannel => {
    if (!isAvailable(c, connected, measuring)) return { available: false, reason: unavailableReason(c) };
    const perBucket = buckets.map((_, i) => figuresOf(metrics(c, tally(c, i), returnPath)));
    const figures = perBucket[0]!.map(([key], f) => ({ key, kind: KINDS[key] ?? 'count', values: perBucket.map((b) => b[f]![1]) }));
    return { available: true, figures };
  };
  const channels = Object.fromEntries(CHANNELS.map((c) => [c, channel(c)])) as Record<Channel, SeriesChannel>;
  return { window, by, since, until: now, buckets, channels } satisfies Series;
}
