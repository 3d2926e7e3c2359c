import type { Queryable } from '../db.js';
import { resultsRepository } from './results.repository.js';

/** The channels counted from channel events; `/results` `harness` is read from the agent's own tables (harness.repository.ts). */
export const CHANNELS = ['email', 'ads', 'seo', 'social', 'aeo', 'network'] as const;
export type Channel = (typeof CHANNELS)[number];
export type DecidedBy = 'person' | 'trust_ladder' | 'setting';

/**
 * What Measurement records on a channel: a `visit` (a landing through a tracked link or
 * reported by the customer's server, refId the visit id), a `scanner_click` (a bot or a mail gateway's
 * link scanner following a tracked link: counted apart, never as a visit) and a `conversion` (attributed
 * last touch by aggregation, refId the event id; its value is summed per currency from `conversions`).
 */
const MEASURED = ['visit', 'scanner_click', 'conversion'] as const;

/**
 * The event types each channel records, and which of them is shipped work (split by who decided it).
 * `amount` is meaningful on `ads.spend` (minor currency units, e.g. cents) and on `conversion` (the event's value in
 * its own currency, which `conversions` keeps).
 */
export const CHANNEL_EVENT_TYPES = {
  email: { types: ['sent', 'reply', 'positive_reply', 'bounce', 'delayed', 'opt_out', 'complaint', ...MEASURED], shipped: 'sent' },
  // The ad platform's metrics (`impression`, `platform_click`, `platform_conversion`: amount = how many;
  // `spend`: amount = money spent) and an applied budget change (`budget_change`: amount = the change).
  ads: {
    types: [
      'test_launched',
      'spend',
      'click',
      'conversion',
      'visit',
      'scanner_click',
      'impression',
      'platform_click',
      'platform_conversion',
      'budget_change',
    ],
    shipped: 'test_launched',
  },
  seo: { types: ['post_published', ...MEASURED], shipped: 'post_published' },
  social: { types: ['post_published', 'engagement', ...MEASURED], shipped: 'post_published' },
  aeo: { types: ['post_published', 'citation', ...MEASURED], shipped: 'post_published' },
  network: { types: ['message_sent', 'request_sent', 'reply', 'connection_accepted'], shipped: 'message_sent' },
} as const satisfies Record<Channel, { types: readonly string[]; shipped: string }>;

export interface ChannelEvent {
  channel: Channel;
  type: string;
  /** When it happened, epoch ms. */
  at: number;
  decidedBy?: DecidedBy | null;
  amount?: number | null;
  /** What caused it (send, card, post id); with it, recording the same event twice is harmless. */
  refId?: string | null;
}

/** Marks a channel as connected: `/results` then reports it, with zeros when nothing happened. Idempotent. */
export async function connectChannel(q: Queryable, accountId: string, channel: Channel, at = Date.now()): Promise<void> {
  await resultsRepository(q).connect(accountId, channel, at);
}

/** Removes a channel's connection: `/results` then says it is not connected. Its events are kept. */
export async function disconnectChannel(q: Queryable, accountId: string, channel: Channel): Promise<void> {
  await resultsRepository(q).disconnect(accountId, channel);
}

/**
 * Records something that happened on a channel, at the time it happened. An event also marks its
 * channel connected (in the same statement). With a `refId`, a second record of the same (channel,
 * type, refId) is ignored, so a retried job cannot count twice. Answers whether it was recorded now
 * (false: that refId was already counted; a concurrent transaction recording it first makes this one
 * wait for its commit, so of two racing callers exactly one reads true). Throws on a type the channel
 * does not have (a programming error).
 */
export async function recordChannelEvent(q: Queryable, accountId: string, e: ChannelEvent): Promise<boolean> {
  return (await recordChannelEvents(q, [{ accountId, event: e }])) > 0;
}

/** `recordChannelEvent` for many events (of any accounts) in one statement; answers how many were new. */
export async function recordChannelEvents(q: Queryable, items: { accountId: string; event: ChannelEvent }[]): Promise<number> {
  const recordedAt = Date.now();
  for (const { event: e } of items) {
    const allowed: readonly string[] = CHANNEL_EVENT_TYPES[e.channel].types;
    if (!allowed.includes(e.type)) throw new Error(`channel ${e.channel} has no event type ${e.type}; types: ${allowed.join(', ')}`);
    if (!Number.isInteger(e.at)) throw new Error('channel event time must be epoch milliseconds');
  }
  return resultsRepository(q).insertEvents(
    items.map(({ accountId, event: e }) => ({
      account_id: accountId,
      channel: e.channel,
      type: e.type,
      at: e.at,
      decided_by: e.decidedBy ?? null,
      amount: e.amount ?? null,
      ref_id: e.refId ?? null,
      recorded_at: recordedAt,
    })),
  );
}

/** Which of these refIds the account's channel already counted an event of this type for (one query). */
export async function countedRefs(q: Queryable, accountId: string, channel: Channel, type: string, refIds: string[]): Promise<Set<string>> {
  return resultsRepository(q).countedRefs(accountId, channel, type, refIds);
}
