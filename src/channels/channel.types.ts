import type { Queryable } from '../db.js';
import type { Fencing } from '../mail/outbound.js';

export type { Fencing } from '../mail/outbound.js';
import type { KindOfWork } from './kinds.js';

/** A payload field as text: the string it is, or '' for anything else (adapters read untyped card payloads). */
export const textOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * One piece of work as an adapter ships it, read from the card's stored draft: who it goes to, its
 * title or subject, its text, and the adapter's own fields (a mail reply's In-Reply-To, …). The fence
 * keeps a copy, so reconciliation can ship the same work again under the same key.
 */
export interface Work {
  kind: KindOfWork;
  to: string | null;
  subject: string;
  body: string;
  details: Record<string, unknown>;
}

/** What an adapter's `prepare` adds to a piece of work before its fence is written. */
export interface Prepared {
  details: Record<string, unknown>;
  body?: string;
}

export interface Shipped {
  /** The outside service's id for what it took. */
  providerId: string;
}

export type Lookup = { state: 'sent'; providerId: string } | { state: 'not_found' } | { state: 'unknown' };

/**
 * The service was not reached, or refused the work before taking it: nothing shipped. `permanent`
 * means it answered no for good; otherwise a retry may succeed. `refusal`: the mail relay's answer about
 * the recipient itself (at RCPT or DATA: a 5xx is a hard bounce, a 4xx a soft failure), with its code and words.
 */
export class NotShipped extends Error {
  constructor(
    message: string,
    readonly permanent = false,
    readonly refusal: { code: number; reply: string } | null = null,
    /** Why the service could not be reached, when that is worth telling the caller (a TLS failure and its cause). */
    readonly detail: string | null = null,
  ) {
    super(message);
    this.name = 'NotShipped';
  }
}

/** The work may have reached the service but its answer was lost: the shipment must be reconciled. */
export class AnswerLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerLost';
  }
}

/**
 * What the shipping path tells an adapter's `prepare` of the account's earlier fences of the same kind, in the fence's
 * transaction (channels never read fences: the spend adapter's monthly cap counts through it).
 */
export interface EarlierFences {
  /** The sum of their increases (`details.amount` above 0, minor units) fenced since `since` and not void (`not_sent`). */
  increasesSince(since: number): Promise<number>;
}

/** How long the shipping path waits on an adapter, and how long it reconciles a lost answer. */
export interface ShipTimings {
  retryAfterSeconds: number;
  reconcileDelayMs: number;
  reconcileWindowMs: number;
  sendTimeoutMs: number;
}

/**
 * What carries one kind of work out. The shipping path (src/shipping/ship-card.service.ts) gives every
 * adapter the same fence, reconciliation, bounded recording of a known outcome, automatic retry and
 * "did it go out?" card; the adapter only turns a draft into work and talks to its service.
 */
export interface ChannelAdapter {
  readonly kind: KindOfWork;
  /** The channel its results are counted under (channel events). */
  readonly channel: string;
  /** Words for sentences: "the mail service", "this mail". */
  readonly service: string;
  readonly noun: string;
  /** True when a second `ship` under the same key is deduplicated by the service. */
  readonly canReship: boolean;
  /** Refuse work that names nobody to send it to. */
  readonly needsRecipient: boolean;
  readonly timings: ShipTimings;
  /** The work a card's stored draft describes (`body` replaces the draft's text where a person typed one). */
  workOf(draft: { title: string; payload: Record<string, unknown> }, body?: string): Work;
  /**
   * Optional: runs in the transaction that writes the fence, before the row. `details` join the work's
   * details; `body`, when given, is the text that ships instead of the draft's (mail with its links
   * made tracked links). The fence keeps both, so every ship under its key (a re-ship after a lost
   * answer too) carries the same. Mail records the thread replies find and the token of its headers.
   * A `leadId` among the details names the lead the work reaches: it becomes `contacted` when it ships.
   */
  prepare?(trx: Queryable, fencing: Fencing, work: Work, earlier: EarlierFences): Promise<Prepared>;
  /** Resolves once the service took it; throws NotShipped or AnswerLost. */
  ship(work: Work, idempotencyKey: string): Promise<Shipped>;
  /** What became of the work shipped under `idempotencyKey`; `fence`: the shipping path's fence of it (its account and details). */
  lookup(idempotencyKey: string, fence: FenceOfWork): Promise<Lookup>;
}

/** What the shipping path hands a lookup of its fence (the fence's table is the shipping path's own). */
export interface FenceOfWork {
  accountId: string;
  details: Record<string, unknown>;
}
