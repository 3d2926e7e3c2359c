import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import type { Channel as EventChannel } from '../results/channel-events.js';
import { blogAdapter } from './blog.adapter.js';
import type { ChannelAdapter } from './channel.types.js';
import { isConnected } from './connections.js';
import { emailAdapter, sequenceAdapter } from './email.adapter.js';
import { adTestAdapter, spendAdapter } from './ads.adapter.js';
import { networkAdapter } from './network.adapter.js';
import { KINDS_OF_WORK, WORK_NOUNS, type KindOfWork } from './kinds.js';

/** How a kind's adapter is made for a process. */
export type AdapterFactory = (config: Config, db: Db) => ChannelAdapter;

interface Channel {
  /** The connection an account needs before this kind can ship, in words. */
  connection: string;
  /** The channel event that counts one shipped piece of this work (results). */
  shipped: { channel: EventChannel; type: string };
  /** Whether a shipment counts as `shipped` at all, from its fence's details (default: every one does). */
  counts?: (details: Record<string, unknown>) => boolean;
  /** The shipped event's type when it depends on the work (default: `shipped.type`). */
  typeOf?: (details: Record<string, unknown>) => string;
  /** The shipped event's amount (minor units), from the fence's details (default: none). */
  amountOf?: (details: Record<string, unknown>) => number | null;
  /** The adapter, once one exists for the kind (or, for a kind an area above this one ships, once it is registered). */
  adapter: AdapterFactory | null;
  /** Whether this account has the connection (each adapter answers this from the account's connections). */
  connected(q: Queryable, accountId: string): Promise<boolean>;
}

const always = () => Promise.resolve(true);

/** Every kind of work and what carries it. `email` and `sequence` ship through MAIL_TRANSPORT, on every account. */
const CHANNELS: Record<KindOfWork, Channel> = {
  email: { connection: 'mail transport', shipped: { channel: 'email', type: 'sent' }, adapter: emailAdapter, connected: always },
  // Mail on the same transport as email: each step counts as one email sent.
  sequence: { connection: 'mail transport', shipped: { channel: 'email', type: 'sent' }, adapter: sequenceAdapter, connected: always },
  // Through the account's `network` connection (admin `channel connect`). A connection request counts apart.
  network_message: {
    connection: 'professional-network connection',
    shipped: { channel: 'network', type: 'message_sent' },
    typeOf: (details) => (details.mode === 'connect' ? 'request_sent' : 'message_sent'),
    adapter: networkAdapter,
    connected: (q, accountId) => isConnected(q, accountId, 'network'),
  },
  // Publishes into our own Content API: connected on every account. Only a post's first publish counts.
  blog_post: {
    connection: 'Content API',
    shipped: { channel: 'seo', type: 'post_published' },
    counts: (details) => details.op === 'publish',
    adapter: blogAdapter,
    connected: always,
  },
  // Both through the account's `ads` connection. An applied budget change counts as `budget_change` with the change
  // as its amount (ads `spend` is money the platform reports spent: the poll's metrics).
  ad_test: {
    connection: 'ad-platform connection',
    shipped: { channel: 'ads', type: 'test_launched' },
    adapter: adTestAdapter,
    connected: (q, accountId) => isConnected(q, accountId, 'ads'),
  },
  spend: {
    connection: 'ad-platform billing connection',
    shipped: { channel: 'ads', type: 'budget_change' },
    amountOf: (details) => (typeof details.amount === 'number' ? details.amount : null),
    adapter: spendAdapter,
    connected: (q, accountId) => isConnected(q, accountId, 'ads'),
  },
  // Starting an experiment ships nothing outside (its mail counts as email when it goes): no event of its own. Its
  // adapter belongs to the experiments area, above this one: the composition roots register it (registerAdapter).
  experiment: {
    connection: 'mail transport',
    shipped: { channel: 'email', type: 'sent' },
    counts: () => false,
    adapter: null,
    connected: always,
  },
};

/** The kinds whose adapter an area above channels provides: the composition roots register each (registerAdapter). */
export type RegisteredKind = Extract<KindOfWork, 'experiment'>;

/**
 * Registers the adapter of a kind whose area stands above channels (`experiment`: src/experiments/experiment.adapter.ts).
 * The composition roots call it as they start (the API's app, each worker, the test helpers that build either);
 * registering the same adapter again changes nothing, and a kind keeps the one adapter it was first given.
 */
export function registerAdapter(kind: RegisteredKind, adapter: AdapterFactory): void {
  const ch = CHANNELS[kind];
  if (ch.adapter && ch.adapter !== adapter) throw new Error(`the ${kind} adapter is already registered`);
  ch.adapter = adapter;
}

const isKind = (k: string): k is KindOfWork => (KINDS_OF_WORK as readonly string[]).includes(k);

/** Why this kind of work cannot ship on this account (the 409's message), or null when it can. */
export async function cannotShip(q: Queryable, accountId: string, kind: string): Promise<string | null> {
  if (!isKind(kind)) return `${kind} is not a kind of work this service ships`;
  const ch = CHANNELS[kind];
  if (ch.adapter && (await ch.connected(q, accountId))) return null;
  return `${WORK_NOUNS[kind]} cannot ship: no ${ch.connection} on this account`;
}

/** The adapter that ships this kind of work (null when none exists). Ask `cannotShip` first for the account. */
export function adapterFor(config: Config, db: Db, kind: string): ChannelAdapter | null {
  if (!isKind(kind)) return null;
  return CHANNELS[kind].adapter?.(config, db) ?? null;
}

/** The channel a kind of work ships on (`email` for mail and sequences): the metrics' `channel` label. */
export const channelOf = (kind: string): EventChannel => CHANNELS[isKind(kind) ? kind : 'email'].shipped.channel;

/** The channel event recorded when a piece of this work shipped (its fence's `details`), or null when it counts as none. */
export function shippedEvent(
  kind: string,
  details: Record<string, unknown> = {},
): { channel: EventChannel; type: string; amount?: number | null } | null {
  const ch = isKind(kind) ? CHANNELS[kind] : CHANNELS.email;
  if (ch.counts && !ch.counts(details)) return null;
  const type = ch.typeOf ? ch.typeOf(details) : ch.shipped.type;
  return { channel: ch.shipped.channel, type, ...(ch.amountOf ? { amount: ch.amountOf(details) } : {}) };
}

export interface ShippingHere {
  ships: KindOfWork[];
  /** Kinds that cannot ship on this account, each with the reason. */
  waits: { kind: KindOfWork; reason: string }[];
}

/** Which kinds of work can ship on this account now (the agent's tool descriptions say so). */
export async function shippingHere(q: Queryable, accountId: string): Promise<ShippingHere> {
  const out: ShippingHere = { ships: [], waits: [] };
  for (const kind of KINDS_OF_WORK) {
    const reason = await cannotShip(q, accountId, kind);
    if (reason) out.waits.push({ kind, reason });
    else out.ships.push(kind);
  }
  return out;
}
