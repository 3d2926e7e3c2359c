import { textOf } from './channel.types.js';
import type { Config } from '../config.js';
import type { Db, Trx } from '../db.js';
import { providerPoll } from '../jobs/provider-poll.job.js';
import { enqueue, type QueueSet } from '../jobs/registry.js';
import { recordLeadMailOutcome } from '../leads/mail-outcome.js';
import { leadForProfile } from '../leads/recipient.js';
import { REPLY_KINDS, type ReplyKind } from '../leads/leads.types.js';
import { recordChannelEvent } from '../results/channel-events.js';
import { applyAdsEvent } from './ads-poll.js';
import { connectedAccounts, openConnection, savePollCursor, type ConnectionKind } from './connections.js';
import { profileUrlOf, providerTimings } from './network.adapter.js';
import { providerBridge, type ProviderEvent } from './provider-http.js';

/** How many events one poll applies, and how many accounts one sweep queues. */
export const POLL_BATCH = 100;
export const POLL_SWEEP_ACCOUNTS = 500;
export const POLL_EVERY_MS = 60_000;

export interface PollResult {
  connected: boolean;
  events: number;
  applied: number;
  /** Event types nobody here reads (kept out of the counts; the cursor moves past them). */
  ignored: number;
}

/**
 * One network event's effect, in the poll's transaction. `reply`: a message was answered: the lead with
 * that profile URL (`data.profileUrl`) becomes `replied` as after a mail reply, and network counts a
 * reply. `accepted`: a connection request was accepted (network `connection_accepted`). Each counts
 * once (its event id is the channel event's ref), so a poll repeated after a crash changes nothing.
 */
async function applyNetworkEvent(trx: Trx, accountId: string, e: ProviderEvent, now: number): Promise<boolean> {
  const at = e.at !== null && Number.isInteger(e.at) && e.at <= now ? e.at : now;
  if (e.type === 'reply') {
    await recordChannelEvent(trx, accountId, { channel: 'network', type: 'reply', at, refId: `network-${e.id}` });
    const profile = profileUrlOf(textOf(e.data.profileUrl) || null);
    const leadId = profile ? await leadForProfile(trx, accountId, profile) : null;
    const kind = textOf(e.data.replyKind);
    const replyKind: ReplyKind = (REPLY_KINDS as readonly string[]).includes(kind) ? (kind as ReplyKind) : 'other';
    if (leadId) await recordLeadMailOutcome(trx, accountId, leadId, { status: 'replied', replyKind, declineReason: null }, at);
    return true;
  }
  if (e.type === 'accepted') {
    await recordChannelEvent(trx, accountId, { channel: 'network', type: 'connection_accepted', at, refId: `network-${e.id}` });
    return true;
  }
  return false;
}

type Applier = (trx: Trx, accountId: string, e: ProviderEvent, now: number) => Promise<boolean>;

/** What reads each kind's events. A kind without one is not polled (its cursor never moves past unread events). */
const APPLIERS: Partial<Record<ConnectionKind, Applier>> = { network: applyNetworkEvent, ads: applyAdsEvent };

/**
 * Reads one page of the account's provider events after its cursor and applies it, the cursor moving in
 * the same transaction, so each event is applied once. A connection gone or replaced meanwhile (another
 * URL) keeps its cursor untouched. Throws when the provider cannot be read (the job retries).
 */
export async function pollProvider(deps: { config: Config; db: Db }, accountId: string, kind: ConnectionKind): Promise<PollResult> {
  const apply = APPLIERS[kind];
  const c = apply ? await openConnection(deps.db, accountId, kind) : null;
  if (!apply || !c) return { connected: false, events: 0, applied: 0, ignored: 0 };
  const service = kind === 'network' ? 'the network provider' : 'the ad platform';
  const bridge = providerBridge({ url: c.url, key: c.key, timeoutMs: providerTimings(deps.config).sendTimeoutMs, service });
  const page = await bridge.poll(c.pollCursor, POLL_BATCH);
  const now = Date.now();
  let applied = 0;
  await deps.db.transaction(async (trx) => {
    for (const e of page.events) if (await apply(trx, accountId, e, now)) applied++;
    await savePollCursor(trx, c, page.next, now);
  });
  return { connected: true, events: page.events.length, applied, ignored: page.events.length - applied };
}

/** Queues a poll for each account with a connection of a polled kind, oldest polled first (at most POLL_SWEEP_ACCOUNTS a kind). */
export async function sweepProviderPolls(deps: { db: Db; queues: QueueSet }): Promise<number> {
  let queued = 0;
  for (const kind of Object.keys(APPLIERS) as ConnectionKind[]) {
    const accounts = await connectedAccounts(deps.db, kind, POLL_SWEEP_ACCOUNTS);
    for (const accountId of accounts) await enqueue(deps.queues, providerPoll, { accountId, kind });
    queued += accounts.length;
  }
  return queued;
}
