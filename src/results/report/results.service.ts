import { DEFAULT_REPLY_WINDOW_SECONDS } from '../../config/experiments.js';
import { postsRepository } from '../../content/posts.repository.js';
import type { Queryable } from '../../db.js';
import { conversionValuesIn } from '../../measurement/conversions.repository.js';
import { tokensRepository } from '../../tokens/tokens.repository.js';
import { CHANNEL_EVENT_TYPES, CHANNELS, type Channel } from '../channel-events.js';
import { adTestsIn, type AdTestResult } from './ads-tests.js';
import type { ExperimentsReader, ReportedExperiment } from '../reported-experiments.js';
import { harnessRepository, type HarnessMetrics, type HarnessSources } from './harness.repository.js';
import { type GroupRow, resultsRepository } from '../results.repository.js';
import { splitWindow, type WindowSplit } from '../rollup-window.js';
import { rollupsRepository } from '../rollups.repository.js';

const HOUR = 60 * 60 * 1000;
export const RESULTS_MIN_SPAN = HOUR;
export const RESULTS_MAX_SPAN = 7 * 24 * HOUR;
export const RESULTS_DEFAULT_SPAN = 24 * HOUR;

/** Who let a piece of shipped work go out. `unattributed` is work recorded without a decider. */
export interface Shipped {
  total: number;
  byPerson: number;
  byTrustLadder: number;
  bySetting: number;
  unattributed: number;
}

/** Conversion value per ISO 4217 currency (amounts in different currencies are never added together). */
type Values = Record<string, number>;
type Metrics = Record<string, number | null | Shipped | Values | AdTestResult[]>;

export interface Tally {
  count: Map<string, number>;
  /** Sum of `amount` per type, null once any event of that type had no amount (unknown). */
  amount: Map<string, number | null>;
  /** Attributed conversion value per currency. */
  value: Values;
  shipped: Shipped;
}

/** The agent's own work: always available (every account has an agent), zeros when nothing happened. */
export type HarnessSection = { available: true; data: { window: HarnessMetrics; baseline: HarnessMetrics } };

export type ChannelSection = { available: true; data: { window: Metrics; baseline: Metrics } } | { available: false; reason: string };

export interface Results {
  window: { since: number; until: number; requestedSince: number | null; clamped: boolean };
  baseline: { since: number; until: number };
  email: ChannelSection;
  ads: ChannelSection;
  seo: ChannelSection;
  social: ChannelSection;
  aeo: ChannelSection;
  network: ChannelSection;
  harness: HarnessSection;
  experiments: ResultsExperiment[];
}

/** `/results` `experiments`: an experiment as it reads now (reported-experiments.ts), without the variants' raw text. */
export type ResultsExperiment = Omit<ReportedExperiment, 'variants'> & {
  variants: Omit<ReportedExperiment['variants'][number], 'value'>[];
};

const DEFAULT_REPLY_WINDOW_MS = DEFAULT_REPLY_WINDOW_SECONDS * 1000;

/**
 * Whether the account has a measurement source: a live token that may report visits and conversions
 * (`measurement:write`), or a post the Content API published (its tracked links bring visits).
 */
export async function hasMeasurementSource(q: Queryable, accountId: string): Promise<boolean> {
  return (await tokensRepository(q).hasLiveScope(accountId, 'measurement:write')) || (await postsRepository(q).anyPublished(accountId));
}

/**
 * Attributed conversion value per (channel, currency), split at `since` (by when each happened): `split.raw` counted
 * from measurement's conversions, `split.rolled` and `split.minutes` from results' rollups and the deltas not folded yet.
 */
async function conversionValues(q: Queryable, accountId: string, since: number, split: WindowSplit, watermark: string) {
  const [raw, rolled] = await Promise.all([
    conversionValuesIn(q, accountId, since, split.raw),
    resultsRepository(q).rolledConversionValues(accountId, since, split, watermark),
  ]);
  const sums = new Map<string, { channel: string; currency: string; current: boolean; n: number; total: number }>();
  for (const r of [...raw, ...rolled]) {
    const key = JSON.stringify([r.channel, r.currency, r.current]);
    const s = sums.get(key) ?? { channel: r.channel, currency: r.currency, current: r.current, n: 0, total: 0 };
    s.n += r.n;
    s.total += r.total;
    sums.set(key, s);
  }
  return [...sums.values()].filter((s) => s.n > 0);
}

/**
 * What the scoreboard reads of areas above it, handed in by its callers (the `/results` route and the agent's
 * read_results, whose process assembles it): the harness's turns and workflow runs as their owners' SQL text, and
 * whether an account has an inbound URL (src/inbound/inbound-urls.repository.ts `has`).
 */
export interface ScoreboardSources extends HarnessSources {
  hasInboundUrl(q: Queryable, accountId: string): Promise<boolean>;
}

/** Whether received mail can reach the service for this account: the SMTP listener is on, or it has an inbound URL. */
export async function hasReturnPath(q: Queryable, accountId: string, smtpPort: number, sources: ScoreboardSources): Promise<boolean> {
  return smtpPort !== 0 || (await sources.hasInboundUrl(q, accountId));
}

/** `since` held between seven days and one hour before `now`; 24 hours ago when absent. */
export function clampSince(since: number | undefined, now: number): { since: number; clamped: boolean } {
  if (since === undefined) return { since: now - RESULTS_DEFAULT_SPAN, clamped: false };
  const clampedSince = Math.min(Math.max(since, now - RESULTS_MAX_SPAN), now - RESULTS_MIN_SPAN);
  return { since: clampedSince, clamped: clampedSince !== since };
}

const ratio = (num: number, den: number): number | null => (den === 0 ? null : Math.round((num / den) * 10_000) / 10_000);

export function emptyTally(): Tally {
  return {
    count: new Map(),
    amount: new Map(),
    value: {},
    shipped: { total: 0, byPerson: 0, byTrustLadder: 0, bySetting: 0, unattributed: 0 },
  };
}

/** Adds one group of events (a channel's type and decider, their count and amounts) to a tally. */
export function addToTally(t: Tally, r: Omit<GroupRow, 'current'>): void {
  t.count.set(r.type, (t.count.get(r.type) ?? 0) + r.n);
  const known = r.with_amount === r.n && t.amount.get(r.type) !== null;
  t.amount.set(r.type, known ? (t.amount.get(r.type) ?? 0) + Number(r.total ?? 0) : null);
  if (CHANNEL_EVENT_TYPES[r.channel as Channel]?.shipped !== r.type) return;
  t.shipped.total += r.n;
  if (r.decided_by === 'person') t.shipped.byPerson += r.n;
  else if (r.decided_by === 'trust_ladder') t.shipped.byTrustLadder += r.n;
  else if (r.decided_by === 'setting') t.shipped.bySetting += r.n;
  else t.shipped.unattributed += r.n;
}

/**
 * Named metrics of one channel from its tally. Counts are 0 when nothing happened; a ratio with nothing
 * to divide by is null. Email's replies, positive replies, reply rate and bounces come back only through
 * received mail: without a return path (no SMTP listener, no inbound URL) they are unknown (null).
 */
export function metrics(channel: Channel, t: Tally, returnPath: boolean): Metrics {
  const n = (type: string) => t.count.get(type) ?? 0;
  const shipped = { ...t.shipped };
  const heard = (v: number | null) => (returnPath ? v : null);
  // Measurement: landings, link scanners counted apart, and conversions attributed last touch.
  const measured = { scannerClicks: n('scanner_click'), conversions: n('conversion'), conversionValue: { ...t.value } };
  switch (channel) {
    case 'email':
      return {
        sent: n('sent'),
        replies: heard(n('reply')),
        positiveReplies: heard(n('positive_reply')),
        replyRate: heard(ratio(n('reply'), n('sent'))),
        bounces: heard(n('bounce')),
        // Sends a receiving server reported as delayed (a DSN with `Action: delayed`): still being tried, nothing blocked.
        delayed: heard(n('delayed')),
        // One-click unsubscribe works without received mail, so these are always known.
        unsubscribes: Math.max(0, n('opt_out') - n('complaint')),
        optOuts: n('opt_out'),
        clicks: n('visit'),
        ...measured,
        shipped,
      };
    case 'ads': {
      const spend = t.amount.has('spend') ? t.amount.get('spend')! : 0;
      // The ad platform's counts (its poll records them with the count as amount) beside our own.
      const reported = (type: string) => t.amount.get(type) ?? 0;
      const conversions = n('conversion') + reported('platform_conversion');
      return {
        testsLaunched: n('test_launched'),
        spend,
        impressions: reported('impression'),
        clicks: n('click') + reported('platform_click'),
        conversions,
        costPerConversion: spend === null ? null : ratio(spend, conversions),
        budgetChanges: n('budget_change'),
        shipped,
      };
    }
    case 'seo':
      return { postsPublished: n('post_published'), visits: n('visit'), ...measured, shipped };
    case 'social':
      return { postsPublished: n('post_published'), engagements: n('engagement'), visits: n('visit'), ...measured, shipped };
    case 'aeo':
      return { postsPublished: n('post_published'), citations: n('citation'), visits: n('visit'), ...measured, shipped };
    case 'network':
      return {
        // Connection requests count apart from messages; a reply answers a message.
        requestsSent: n('request_sent'),
        messagesSent: n('message_sent'),
        replies: n('reply'),
        connectionsAccepted: n('connection_accepted'),
        replyRate: ratio(n('reply'), n('message_sent')),
        shipped,
      };
  }
}

/**
 * Channels whose data is visits and conversions: available once the account has a measurement source
 * (a live `measurement:write` token, or a published post), with zeros until something is measured.
 */
const MEASURED_CHANNELS: readonly Channel[] = ['seo', 'social', 'aeo'];
/** Whether a channel is reported: connected, or a measured channel of an account with a measurement source. */
export const isAvailable = (channel: Channel, connected: readonly string[], measuring: boolean): boolean =>
  connected.includes(channel) || (measuring && MEASURED_CHANNELS.includes(channel));

export const NO_MEASUREMENT =
  'no measurement source: publish a post through the Content API, or report visits with a measurement:write token';

/**
 * Email has nothing to connect: the service's mail transport sends for every account, and the channel
 * counts from the account's first send (its `sent` event), so the reason says that, not "not connected".
 */
export const NO_MAIL_SENT = "no mail sent yet: email results start with the account's first send";

/** Why a channel is `available: false`: what would make it available. */
export const unavailableReason = (channel: Channel): string =>
  channel === 'email' ? NO_MAIL_SENT : MEASURED_CHANNELS.includes(channel) ? NO_MEASUREMENT : 'not connected';

/**
 * The per-channel scoreboard for [since, now] and the equal-length baseline before it. A channel the
 * account has not connected is `{ available: false, reason }` (unavailableReason). `returnPath`: whether
 * replies and bounces can reach the service for this account (`hasReturnPath`). `harness` (the agent's own
 * work, from its turns, cards and workflow runs) is always available. `experiments`: the account's running and
 * proposed experiments and those that ended since the baseline began, counting exposures older than `replyWindowMs`
 * (config.experiments.replyWindowMs: docs/decisions/experiments.md, "Reading an experiment"), by the handed
 * `readExperiments` (none: no experiments). `sources`: what it reads of areas above it (ScoreboardSources).
 */
export async function getResults(
  q: Queryable,
  accountId: string,
  requestedSince: number | undefined,
  now = Date.now(),
  returnPath = true,
  {
    sources,
    rollups = true,
    replyWindowMs = DEFAULT_REPLY_WINDOW_MS,
    readExperiments,
  }: { sources: ScoreboardSources; rollups?: boolean; replyWindowMs?: number; readExperiments?: ExperimentsReader },
): Promise<Results> {
  const { since, clamped } = clampSince(requestedSince, now);
  const span = now - since;
  const baselineSince = since - span;
  const repo = resultsRepository(q);
  // Whole hours and minutes from the rollups, partial minutes raw; `rollups: false` counts everything raw (the
  // reference the tests compare with).
  const mark = await rollupsRepository(q).watermark();
  const split = splitWindow(baselineSince, since, now, rollups, mark.minutesFrom);
  const watermark = mark.xid;
  const [rows, values, connected, measuring, harnessWork, experiments] = await Promise.all([
    repo.tally(accountId, since, split, watermark),
    conversionValues(q, accountId, since, split, watermark),
    repo.connected(accountId),
    hasMeasurementSource(q, accountId),
    harnessRepository(q, sources).counts(accountId, since, split, watermark),
    readExperiments ? readExperiments(q, accountId, baselineSince, now - replyWindowMs) : [],
  ]);
  const tallies = new Map<string, Tally>();
  const tally = (channel: string, current: boolean) => {
    const key = `${channel}:${current}`;
    if (!tallies.has(key)) tallies.set(key, emptyTally());
    return tallies.get(key)!;
  };
  for (const r of rows) addToTally(tally(r.channel, r.current), r);
  for (const v of values) {
    const t = tally(v.channel, v.current);
    t.value[v.currency] = Math.round(((t.value[v.currency] ?? 0) + v.total) * 10_000) / 10_000;
  }
  const available = (channel: Channel) => isAvailable(channel, connected, measuring);
  const section = (channel: Channel): ChannelSection =>
    available(channel)
      ? {
          available: true,
          data: {
            window: metrics(channel, tally(channel, true), returnPath),
            baseline: metrics(channel, tally(channel, false), returnPath),
          },
        }
      : { available: false, reason: unavailableReason(channel) };
  const harness: HarnessSection = { available: true, data: harnessWork };
  const adsSection = section('ads');
  // Ads: each test that ran in the window (and in the baseline), with the platform's numbers per variant.
  if (adsSection.available) {
    const [current, before] = await Promise.all([adTestsIn(q, accountId, since, now), adTestsIn(q, accountId, baselineSince, since)]);
    adsSection.data.window.tests = current;
    adsSection.data.baseline.tests = before;
  }
  const [email, ads, seo, social, aeo, network] = CHANNELS.map((c) => (c === 'ads' ? adsSection : section(c))) as [
    ChannelSection,
    ChannelSection,
    ChannelSection,
    ChannelSection,
    ChannelSection,
    ChannelSection,
  ];
  return {
    window: { since, until: now, requestedSince: requestedSince ?? null, clamped },
    baseline: { since: baselineSince, until: since },
    email,
    ads,
    seo,
    social,
    aeo,
    network,
    harness,
    experiments: experiments.map((e) => ({ ...e, variants: e.variants.map(({ value: _value, ...v }) => v) })),
  };
}
