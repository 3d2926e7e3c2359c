import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { isCluster, keyspace, type Redis } from '../redis.js';

/**
 * Which secret hashes may belong to an account's inbound URL, kept in one Redis hash (field: the
 * secret's SHA-256, value: the account id), so the inbound URL answers a secret no account has with a
 * 404 without touching Postgres: a flood of made-up secrets costs one Redis call each, no query.
 *
 * The same contract as the live-hooks registry (src/webhooks/live-hooks.ts): Postgres stays the truth
 * and the hash is a superset of it. A new secret is added before the transaction that stores it
 * commits (and the change is refused when Redis is away); the secret it replaced is removed after the
 * commit, and a removal that fails (or an account deleted with its URL) only leaves an extra field,
 * which costs that secret a Postgres lookup that then finds nothing. The sentinel field says the hash was
 * filled from Postgres: a hash without it (evicted, flushed, a fresh Redis) is not trusted, the door
 * asks Postgres meanwhile and one rebuild fills it again; a process also rebuilds after each reconnect
 * (a Redis restarted from an older snapshot keeps the sentinel but may miss secrets added since).
 */
const SENTINEL = '!';
const REBUILD_CHUNK = 1_000;

export const inboundRegistryKey = (config: Pick<Config, 'queuePrefix'>) => `${keyspace(config.queuePrefix)}:inb:live`;

/** Makes a secret live for the door; called before the transaction that stores it commits. */
export async function announceSecret(
  redis: Redis,
  config: Pick<Config, 'queuePrefix'>,
  secretHash: string,
  accountId: string,
): Promise<void> {
  await redis.hset(inboundRegistryKey(config), secretHash, accountId);
}

/** Forgets a secret after the change that replaced it committed; a failure only costs lookups. */
export async function withdrawSecret(redis: Redis, config: Pick<Config, 'queuePrefix'>, secretHash: string): Promise<boolean> {
  return redis.hdel(inboundRegistryKey(config), secretHash).then(
    () => true,
    () => false,
  );
}

export interface LiveInbound {
  /** True: the secret may be live (ask Postgres); false: no account has it. Throws when Redis fails. */
  mayBeLive(secretHash: string): Promise<boolean>;
  /** Resolves once this process trusts the hash (after a rebuild if one was needed). */
  ready(): Promise<void>;
}

const registries = new WeakMap<Redis, LiveInbound>();

/** One registry per Redis connection: its trust follows that connection's reconnects. */
export function liveInbound(deps: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }): LiveInbound {
  let reg = registries.get(deps.redis);
  if (!reg) {
    reg = createLiveInbound(deps);
    registries.set(deps.redis, reg);
  }
  return reg;
}

function createLiveInbound({ config, db, redis }: { config: Pick<Config, 'queuePrefix'>; db: Db; redis: Redis }): LiveInbound {
  const k = inboundRegistryKey(config);
  let trusted = false;
  // Bumped on every reconnect: a rebuild that began before one does not make the hash trusted.
  let epoch = 0;
  let rebuilding: Promise<void> | null = null;
  const untrust = () => {
    epoch++;
    trusted = false;
  };
  redis.on('ready', untrust);
  if (isCluster(redis)) redis.on('-node', untrust);

  function rebuild(): Promise<void> {
    rebuilding ??= (async () => {
      const started = epoch;
      const rows: { secret_hash: string; account_id: string }[] = await db('inbound_urls').select('secret_hash', 'account_id');
      // In bounded commands; the sentinel last, so no process trusts a hash that is still filling.
      for (let i = 0; i < rows.length; i += REBUILD_CHUNK) {
        await redis.hset(k, ...rows.slice(i, i + REBUILD_CHUNK).flatMap((r) => [r.secret_hash, r.account_id]));
      }
      await redis.hset(k, SENTINEL, '1');
      if (epoch === started) trusted = true;
    })().finally(() => {
      rebuilding = null;
    });
    return rebuilding;
  }

  return {
    async mayBeLive(secretHash) {
      if (!trusted) {
        void rebuild().catch(() => {});
        return true;
      }
      const [sentinel, value] = await redis.hmget(k, SENTINEL, secretHash);
      if (sentinel === null) {
        trusted = false;
        void rebuild().catch(() => {});
        return true;
      }
      return value !== null;
    },
    async ready() {
      for (let i = 0; i < 5 && !trusted; i++) await rebuild();
      if (!trusted) throw new Error('the inbound-URL registry could not be rebuilt');
    },
  };
}
