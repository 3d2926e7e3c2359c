import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { metrics } from '../metrics/registry.js';
import { announce, liveRegistry, withdraw } from '../live-registry.js';
import { keyspace, type Redis } from '../redis.js';
import { hashHookToken } from './hook-token.js';

/**
 * Which token hashes may belong to a live hook (field: token hash, value: `<accountId> <hookId>`), so
 * intake can answer a token no live hook has with a 404 without touching Postgres, and count a live
 * hook's delivery before writing anything for it. Writers add a token before committing the change
 * that makes it live (create, enable, regenerate), so every API process sees a new or re-enabled URL
 * at once, and remove it after committing the change that ends it (disable, delete, regenerate); a
 * leftover field costs a Postgres lookup (intake still joins on the active hook), never a wrong answer.
 * The registry's contract (the sentinel, rebuilds after a reconnect or a lost node) is src/live-registry.ts's.
 */
export type LiveHook = { accountId: string; hookId: string };

/** The registry's Redis key, in the deployment's keyspace. */
export const registryKey = (config: Pick<Config, 'queuePrefix'>) => `${keyspace(config.queuePrefix)}:whk:live`;
const value = (h: LiveHook) => `${h.accountId} ${h.hookId}`;

/** Makes a token live for intake; called before the transaction that makes it live commits. */
export async function announceToken(redis: Redis, config: Pick<Config, 'queuePrefix'>, tokenHash: string, hook: LiveHook): Promise<void> {
  await announce(redis, registryKey(config), tokenHash, value(hook));
}

/** Forgets a token after the change that ended it committed; a failure only costs lookups. */
export function withdrawToken(redis: Redis, config: Pick<Config, 'queuePrefix'>, tokenHash: string): Promise<boolean> {
  return withdraw(redis, registryKey(config), tokenHash);
}

export interface LiveHooks {
  /**
   * Each token hash's hook (null: no live hook has it), or `untrusted` when the hash cannot be relied
   * on yet (intake then asks Postgres). Throws when Redis fails.
   */
  lookup(tokenHashes: string[]): Promise<(LiveHook | null)[] | 'untrusted'>;
  /** Resolves once this process trusts the hash (after a rebuild if one was needed). */
  ready(): Promise<void>;
}

/** The live-hooks registry of this Redis connection. */
export function liveHooks({ config, db, redis }: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }): LiveHooks {
  const reg = liveRegistry(redis, {
    key: registryKey(config),
    name: 'live-hooks',
    load: async () => {
      const rows: { token_hash: string; account_id: string; id: string }[] = await db('webhook_hooks')
        .where({ status: 'active' })
        .select('token_hash', 'account_id', 'id');
      return rows.map((r) => [r.token_hash, value({ accountId: r.account_id, hookId: r.id })]);
    },
  });
  return {
    async lookup(tokenHashes) {
      const found = await reg.lookup(tokenHashes);
      if (found === 'untrusted') return found;
      return found.map((v) => {
        if (!v) return null;
        const [accountId = '', hookId = ''] = v.split(' ');
        return { accountId, hookId };
      });
    },
    ready: () => reg.ready(),
  };
}

/**
 * Whether a hook URL's token may belong to a live hook, asked before its body is read: false (answer
 * 404 unread) only when the trusted live-hooks registry in Redis does not know the token. An untrusted
 * registry or a failing Redis says true, and receiveDelivery decides after the body, from Postgres.
 */
export async function hookMayBeLive(deps: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }, token: string): Promise<boolean> {
  const found = await liveHooks(deps)
    .lookup([hashHookToken(token)])
    .catch(() => 'untrusted' as const);
  if (found === 'untrusted' || found[0]) return true;
  metrics.webhookDeliveries.inc({ outcome: 'unknown_hook' });
  return false;
}
