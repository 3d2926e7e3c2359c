import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { metrics } from '../metrics/registry.js';
import { isCluster, keyspace, type Redis } from '../redis.js';
import { hashHookToken } from './hook-token.js';

/**
 * Which token hashes may belong to a live hook, kept in one Redis hash (field: token hash, value:
 * `<accountId> <hookId>`), so intake can answer a token no live hook has with a 404 without touching
 * Postgres, and count a live hook's delivery before writing anything for it.
 *
 * Postgres stays the truth; the hash is a superset of it. Writers add a token before committing the
 * change that makes it live (create, enable, regenerate) and refuse the change when Redis is away, so
 * every API process sees a new or re-enabled URL at once; they remove a token only after committing
 * the change that ends it (disable, delete, regenerate), and a removal that fails leaves an extra
 * field, which costs that token a Postgres lookup (intake still joins on the active hook), never a
 * wrong answer. No process keeps a copy: nothing can go stale in one process and not another.
 *
 * The sentinel field says the hash was filled from Postgres. A hash that lost it (evicted, flushed,
 * a fresh Redis) is not trusted: intake falls back to Postgres and one rebuild fills it again. A
 * rebuild only adds (it never deletes a token a writer added meanwhile). A process also rebuilds
 * after each reconnect before trusting the hash, since a Redis restarted from an older snapshot keeps
 * the sentinel but may miss tokens added since; on a cluster, after each node it loses (a failover
 * may promote a replica that missed the last writes).
 */
const SENTINEL = '!';
const REBUILD_CHUNK = 1_000;

export type LiveHook = { accountId: string; hookId: string };

/** The registry's Redis key, in the deployment's keyspace. */
export const registryKey = (config: Pick<Config, 'queuePrefix'>) => `${keyspace(config.queuePrefix)}:whk:live`;
const value = (h: LiveHook) => `${h.accountId} ${h.hookId}`;

/** Makes a token live for intake; called before the transaction that makes it live commits. */
export async function announceToken(redis: Redis, config: Pick<Config, 'queuePrefix'>, tokenHash: string, hook: LiveHook): Promise<void> {
  await redis.hset(registryKey(config), tokenHash, value(hook));
}

/** Forgets a token after the change that ended it committed; a failure only costs lookups. */
export async function withdrawToken(redis: Redis, config: Pick<Config, 'queuePrefix'>, tokenHash: string): Promise<boolean> {
  return redis.hdel(registryKey(config), tokenHash).then(
    () => true,
    () => false,
  );
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

const registries = new WeakMap<Redis, LiveHooks>();

/** One registry per Redis connection: its trust follows that connection's reconnects. */
export function liveHooks(deps: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }): LiveHooks {
  let reg = registries.get(deps.redis);
  if (!reg) {
    reg = createLiveHooks(deps);
    registries.set(deps.redis, reg);
  }
  return reg;
}

function createLiveHooks({ config, db, redis }: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }): LiveHooks {
  const k = registryKey(config);
  let trusted = false;
  // Bumped on every reconnect: a rebuild that began before one does not make the hash trusted.
  let epoch = 0;
  let rebuilding: Promise<void> | null = null;
  const untrust = () => {
    epoch++;
    trusted = false;
  };
  redis.on('ready', untrust);
  // On a cluster, a node lost (a failover) may have handed the registry's slot to a replica that
  // missed the last writes: the same as a restart from an older snapshot.
  if (isCluster(redis)) redis.on('-node', untrust);

  function rebuild(): Promise<void> {
    rebuilding ??= (async () => {
      const started = epoch;
      const rows: { token_hash: string; account_id: string; id: string }[] = await db('webhook_hooks')
        .where({ status: 'active' })
        .select('token_hash', 'account_id', 'id');
      // In bounded commands; the sentinel last, so no process trusts a hash that is still filling.
      for (let i = 0; i < rows.length; i += REBUILD_CHUNK) {
        await redis.hset(
          k,
          ...rows.slice(i, i + REBUILD_CHUNK).flatMap((r) => [r.token_hash, value({ accountId: r.account_id, hookId: r.id })]),
        );
      }
      await redis.hset(k, SENTINEL, '1');
      if (epoch === started) trusted = true;
    })().finally(() => {
      rebuilding = null;
    });
    return rebuilding;
  }

  return {
    async lookup(tokenHashes) {
      if (!trusted) {
        void rebuild().catch(() => {});
        return 'untrusted';
      }
      const [sentinel, ...values] = await redis.hmget(k, SENTINEL, ...tokenHashes);
      if (sentinel === null) {
        trusted = false;
        void rebuild().catch(() => {});
        return 'untrusted';
      }
      return values.map((v) => {
        if (!v) return null;
        const [accountId = '', hookId = ''] = v.split(' ');
        return { accountId, hookId };
      });
    },
    async ready() {
      for (let i = 0; i < 5 && !trusted; i++) await rebuild();
      if (!trusted) throw new Error('the live-hooks registry could not be rebuilt');
    },
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
