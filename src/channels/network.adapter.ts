import { normaliseBlockValue, NETWORK_HOST } from '../blocklist/normalise.js';
import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import { Rejected } from '../errors.js';
import { leadForProfile } from '../leads/recipient.js';
import { NotShipped, textOf, type ChannelAdapter, type ShipTimings, type Work } from './channel.types.js';
import { openConnection, type ConnectionKind } from './connections.js';
import { providerBridge, type ProviderBridge } from './provider-http.js';

/** A request never waits longer than this on a provider bridge, whatever MAIL_SEND_TIMEOUT_MS says. */
const MAX_REQUEST_MS = 30_000;

/** The canonical profile URL (`https://www.<network_host>/in/<slug>`) `to` names, or null when it is not one. */
export function profileUrlOf(to: string | null): string | null {
  if (!to) return null;
  const read = normaliseBlockValue(to);
  return read?.kind === 'network' ? read.value : null;
}

/** The shipping timings of a provider adapter: the mail settings' (one set of knobs for every outside service). */
export function providerTimings(config: Config): ShipTimings {
  const m = config.mail;
  return {
    retryAfterSeconds: m.retryAfterSeconds,
    reconcileDelayMs: m.reconcileDelayMs,
    reconcileWindowMs: m.reconcileWindowMs,
    sendTimeoutMs: Math.min(m.sendTimeoutMs, MAX_REQUEST_MS),
  };
}

/**
 * The bridge of the account's connection of this kind, or null when it has none. `accountId` of a
 * fence's work is kept in its details by `prepare`; a lookup finds it from the key's fence.
 */
export async function bridgeFor(config: Config, q: Queryable, accountId: string, kind: ConnectionKind): Promise<ProviderBridge | null> {
  const c = await openConnection(q, config.sealing, accountId, kind);
  if (!c) return null;
  const service = kind === 'network' ? 'the network provider' : 'the ad platform';
  return providerBridge({ url: c.url, key: c.key, timeoutMs: providerTimings(config).sendTimeoutMs, service });
}

/** The account whose fence carries this idempotency key (the shipping path's fences: shipments). */
export async function accountOfKey(q: Queryable, key: string): Promise<string | null> {
  const row = (await q('shipments').where({ idempotency_key: key }).first('account_id')) as { account_id: string } | undefined;
  return row?.account_id ?? null;
}

/**
 * A provider adapter's ship and lookup through the account's connection of `kind` (network, ads): the
 * part every provider adapter shares. Work whose account has lost its connection is not shipped (for
 * good: a person reconnects and approves again).
 */
export function providerShipping(config: Config, db: Db, kind: ConnectionKind): Pick<ChannelAdapter, 'ship' | 'lookup'> {
  return {
    async ship(work, key) {
      const accountId = textOf(work.details.accountId);
      const bridge = accountId ? await bridgeFor(config, db, accountId, kind).catch(() => null) : null;
      if (!bridge) throw new NotShipped(`the account has no ${kind} connection any more`, true);
      return bridge.ship(work, key);
    },
    async lookup(key) {
      const accountId = await accountOfKey(db, key);
      const bridge = accountId ? await bridgeFor(config, db, accountId, kind) : null;
      return bridge ? bridge.lookup(key) : { state: 'unknown' };
    },
  };
}

/**
 * `network_message`: a connection request (`mode: 'connect'`, an optional note) or a message (`mode:
 * 'message'`, the default) to a profile URL on the professional network, through the account's
 * `network` connection (docs/provider-bridge.md). The card's payload: `to` (the profile URL), `mode`,
 * `draft: { subject, body }`. Anything but a profile URL is refused before a fence is written.
 */
export const networkAdapter = (config: Config, db: Db): ChannelAdapter => ({
  kind: 'network_message',
  channel: 'network',
  service: 'the network provider',
  noun: 'network message',
  canReship: true,
  needsRecipient: true,
  timings: providerTimings(config),
  workOf(card, body): Work {
    const p = card.payload;
    const d = (p.draft && typeof p.draft === 'object' ? p.draft : {}) as Record<string, unknown>;
    const to = textOf(p.to).trim() || null;
    return {
      kind: 'network_message',
      to: profileUrlOf(to) ?? to,
      subject: (textOf(d.subject) || card.title).trim(),
      body: body ?? textOf(d.body),
      details: { mode: p.mode === 'connect' ? 'connect' : 'message' },
    };
  },
  async prepare(trx, fencing, work) {
    const profile = profileUrlOf(work.to);
    if (!profile) {
      throw new Rejected(
        `a network message goes to a profile URL (https://www.${NETWORK_HOST}/in/<slug>), not ${JSON.stringify(work.to ?? '')}; ` +
          'request changes so the agent names one',
      );
    }
    if (work.details.mode === 'message' && !work.body.trim()) throw new Rejected('this network message has no text; request changes');
    const leadId = await leadForProfile(trx, fencing.accountId, profile);
    return { details: { accountId: fencing.accountId, ...(leadId ? { leadId } : {}) } };
  },
  ...providerShipping(config, db, 'network'),
});
