import { getAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite } from '../audit/audit.service.js';
import { connectProvider, disconnectProvider, listConnections } from '../channels/connections.js';
import { setSpendCap } from '../channels/spend-cap.js';
import type { Verb } from './verb.js';

/**
 * Provider connections: the professional network (`network`) and the ad platform (`ads`),
 * reached through a provider bridge over HTTP (docs/provider-bridge.md). The key goes in once, with
 * `connect`, and is never printed, logged or audited again; `list` shows where each kind goes.
 */
export const CHANNEL_VERBS: Record<string, Verb> = {
  'channel connect': {
    flags: ['account', 'kind', 'transport', 'url', 'key'],
    async run(f, { db, config }) {
      await getAccount(db, f.account!);
      const connection = await auditedWrite(db, adminActor(f.account!, 'channel connect'), async (trx) => {
        const input = { accountId: f.account!, kind: f.kind!, transport: f.transport!, url: f.url!, key: f.key! };
        const c = await connectProvider(trx, config.sealing, input, Date.now());
        return { result: c, targetId: `${c.accountId}:${c.kind}` };
      });
      return { connection };
    },
  },
  'channel list': {
    flags: ['account'],
    async run(f, { db }) {
      await getAccount(db, f.account!);
      return { connections: await listConnections(db, f.account!) };
    },
  },
  'channel disconnect': {
    flags: ['account', 'kind'],
    async run(f, { db }) {
      await getAccount(db, f.account!);
      await auditedWrite(db, adminActor(f.account!, 'channel disconnect'), async (trx) => {
        await disconnectProvider(trx, f.account!, f.kind!);
        return { result: null, targetId: `${f.account!}:${f.kind!}` };
      });
      return { ok: true };
    },
  },
  // The monthly cap on budget changes (minor units); a change that would pass it is refused at approve.
  'channel spend-cap': {
    flags: ['account', 'monthly-cap', 'currency'],
    async run(f, { db }) {
      await getAccount(db, f.account!);
      return auditedWrite(db, adminActor(f.account!, 'channel spend-cap'), async (trx) => {
        const cap = await setSpendCap(trx, f.account!, f['monthly-cap']!, f.currency!, Date.now());
        return { result: { accountId: cap.accountId, monthlyCap: cap.monthlyCap, currency: cap.currency }, targetId: cap.accountId };
      });
    },
  },
};
