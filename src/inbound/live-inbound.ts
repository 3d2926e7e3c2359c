import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { announce, liveRegistry, withdraw } from '../live-registry.js';
import { keyspace, type Redis } from '../redis.js';

/**
 * Which secret hashes may belong to an account's inbound URL (field: the secret's SHA-256, value: the
 * account id), so the inbound URL answers a secret no account has with a 404 without touching Postgres:
 * a flood of made-up secrets costs one Redis call each, no query. The registry's contract (Postgres the
 * truth, the hash a superset, rebuilt when not trusted) is src/live-registry.ts's; an account deleted
 * with its URL only leaves an extra field.
 */
export const inboundRegistryKey = (config: Pick<Config, 'queuePrefix'>) => `${keyspace(config.queuePrefix)}:inb:live`;

/** Makes a secret live for the door; called before the transaction that stores it commits. */
export async function announceSecret(
  redis: Redis,
  config: Pick<Config, 'queuePrefix'>,
  secretHash: string,
  accountId: string,
): Promise<void> {
  await announce(redis, inboundRegistryKey(config), secretHash, accountId);
}

/** Forgets a secret after the change that replaced it committed; a failure only costs lookups. */
export function withdrawSecret(redis: Redis, config: Pick<Config, 'queuePrefix'>, secretHash: string): Promise<boolean> {
  return withdraw(redis, inboundRegistryKey(config), secretHash);
}

export interface LiveInbound {
  /** True: the secret may be live (ask Postgres); false: no account has it. Throws when Redis fails. */
  mayBeLive(secretHash: string): Promise<boolean>;
  /** Resolves once this process trusts the hash (after a rebuild if one was needed). */
  ready(): Promise<void>;
}

/** The inbound-URL registry of this Redis connection. */
export function liveInbound({ config, db, redis }: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }): LiveInbound {
  const reg = liveRegistry(redis, {
    key: inboundRegistryKey(config),
    name: 'inbound-URL',
    load: async () => {
      const rows: { secret_hash: string; account_id: string }[] = await db('inbound_urls').select('secret_hash', 'account_id');
      return rows.map((r) => [r.secret_hash, r.account_id]);
    },
  });
  return {
    async mayBeLive(secretHash) {
      const found = await reg.lookup([secretHash]);
      return found === 'untrusted' || found[0] !== null;
    },
    ready: () => reg.ready(),
  };
}
