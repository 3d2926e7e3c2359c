import type { Config } from '../config.js';
import type { Db, Trx } from '../db.js';
import { providerPoll } from '../jobs/provider-polls.js';
import { enqueue, type QueueSet } from '../jobs/registry.js';
import { applyAdsEvent } from './ads-poll.js';
import { connectedAccounts, openConnection, savePollCursor, type ConnectionKind } from './connections.js';
import { providerTimings } from './network.adapter.js';
import { networkPage, type NetworkReplyEffects } from './network-poll.js';
import { providerBridge, type ProviderEvent } from './provider-http.js';

export type { NetworkReply, NetworkReplyEffects, ReplyJudgement } from './network-poll.js';

/** How many events one poll applies, and how many accounts one sweep queues. */
export const POLL_BATCH = 100;
export const POLL_SWEEP_ACCOUNTS = 500;

export interface PollResult {
  connected: boolean;
  events: number;
  applied: number;
  /** Event types nobody here reads (kept out of the counts; the cursor moves past them). */
  ignored: number;
}

type Applier = (trx: Trx, accountId: string, e: ProviderEvent, now: number) => Promise<boolean>;

/** The kinds polled: each has a reader of its events. A kind without one is not polled (its cursor never moves past unread events). */
const POLLED: readonly ConnectionKind[] = ['network', 'ads'];

/**
 * Reads one page of the account's provider events after its cursor and applies it, the cursor moving in
 * the same transaction, so each event is applied once. A connection gone or replaced meanwhile (another
 * URL) keeps its cursor untouched. Throws when the provider cannot be read (the job retries). What a
 * network reply does to the lead, its sequences and the agent is `replies` (network-poll.ts), given by
 * the caller (src/inbound/network-replies.service.ts: `pollProviderEvents`), as this layer cannot reach
 * review or the agent; ads polls ignore it.
 */
export async function pollProvider<W>(
  deps: { config: Config; db: Db },
  accountId: string,
  kind: ConnectionKind,
  replies: NetworkReplyEffects<W>,
): Promise<PollResult> {
  const c = POLLED.includes(kind) ? await openConnection(deps.db, deps.config.sealing, accountId, kind) : null;
  if (!c) return { connected: false, events: 0, applied: 0, ignored: 0 };
  const service = kind === 'network' ? 'the network provider' : 'the ad platform';
  const bridge = providerBridge({ url: c.url, key: c.key, timeoutMs: providerTimings(deps.config).sendTimeoutMs, service });
  const page = await bridge.poll(c.pollCursor, POLL_BATCH);
  const now = Date.now();
  const network = kind === 'network' ? await networkPage(deps.db, accountId, page.events, now, replies) : null;
  const apply: Applier = network?.apply ?? applyAdsEvent;
  let applied = 0;
  await deps.db.transaction(async (trx) => {
    for (const e of page.events) if (await apply(trx, accountId, e, now)) applied++;
    await savePollCursor(trx, c, page.next, now);
  });
  await network?.after();
  return { connected: true, events: page.events.length, applied, ignored: page.events.length - applied };
}

/** Queues a poll for each account with a connection of a polled kind, oldest polled first (at most POLL_SWEEP_ACCOUNTS a kind). */
export async function sweepProviderPolls(deps: { db: Db; queues: QueueSet }): Promise<number> {
  let queued = 0;
  for (const kind of POLLED) {
    const accounts = await connectedAccounts(deps.db, kind, POLL_SWEEP_ACCOUNTS);
    for (const accountId of accounts) await enqueue(deps.queues, providerPoll, { accountId, kind });
    queued += accounts.length;
  }
  return queued;
}
