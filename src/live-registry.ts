import { isCluster, type Redis } from './redis.js';

/**
 * A Redis hash that says which secret hashes (hook tokens, inbound-URL secrets) may be live, so a
 * public door answers a made-up secret with a 404 after one Redis call and no Postgres query.
 *
 * Postgres stays the truth; the hash is a superset of it. Writers add a field before committing the
 * change that makes it live (and refuse the change when Redis is away), and remove it only after
 * committing the change that ends it; a removal that fails leaves an extra field, which costs that
 * secret a Postgres lookup, never a wrong answer. No process keeps a copy.
 *
 * The sentinel field says the hash was filled from Postgres. A hash that lost it (evicted, flushed, a
 * fresh Redis) is not trusted: the door falls back to Postgres and one rebuild fills it again. A
 * rebuild only adds (it never deletes a field a writer added meanwhile). A process also rebuilds after
 * each reconnect before trusting the hash, since a Redis restarted from an older snapshot keeps the
 * sentinel but may miss fields added since; on a cluster, after each node it loses (a failover may
 * promote a replica that missed the last writes).
 */
const SENTINEL = '!';
const REBUILD_CHUNK = 1_000;

export interface LiveRegistry {
  /** Each field's value (null: not live), or `untrusted` while the hash cannot be relied on (ask Postgres). Throws when Redis fails. */
  lookup(fields: string[]): Promise<(string | null)[] | 'untrusted'>;
  /** Resolves once this process trusts the hash (after a rebuild if one was needed). */
  ready(): Promise<void>;
}

/** What one registry is: its Redis key, what it is called in errors, and how Postgres lists its live fields and values. */
export interface RegistrySpec {
  key: string;
  name: string;
  load(): Promise<[field: string, value: string][]>;
}

const registries = new WeakMap<Redis, Map<string, LiveRegistry>>();

/** One registry per Redis connection and key: its trust follows that connection's reconnects. */
export function liveRegistry(redis: Redis, spec: RegistrySpec): LiveRegistry {
  let byKey = registries.get(redis);
  if (!byKey) {
    byKey = new Map();
    registries.set(redis, byKey);
  }
  let reg = byKey.get(spec.key);
  if (!reg) {
    reg = createRegistry(redis, spec);
    byKey.set(spec.key, reg);
  }
  return reg;
}

/** Makes a field live; called before the transaction that makes it live commits. */
export async function announce(redis: Redis, key: string, field: string, value: string): Promise<void> {
  await redis.hset(key, field, value);
}

/** Forgets a field after the change that ended it committed; false when Redis failed (that only costs lookups). */
export async function withdraw(redis: Redis, key: string, field: string): Promise<boolean> {
  return redis.hdel(key, field).then(
    () => true,
    () => false,
  );
}

function createRegistry(redis: Redis, { key, name, load }: RegistrySpec): LiveRegistry {
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
      const rows = await load();
      // In bounded commands; the sentinel last, so no process trusts a hash that is still filling.
      for (let i = 0; i < rows.length; i += REBUILD_CHUNK) {
        await redis.hset(key, ...rows.slice(i, i + REBUILD_CHUNK).flat());
      }
      await redis.hset(key, SENTINEL, '1');
      if (epoch === started) trusted = true;
    })().finally(() => {
      rebuilding = null;
    });
    return rebuilding;
  }

  return {
    async lookup(fields) {
      if (!trusted) {
        void rebuild().catch(() => {});
        return 'untrusted';
      }
      const [sentinel, ...values] = await redis.hmget(key, SENTINEL, ...fields);
      if (sentinel === null) {
        trusted = false;
        void rebuild().catch(() => {});
        return 'untrusted';
      }
      return values;
    },
    async ready() {
      for (let i = 0; i < 5 && !trusted; i++) await rebuild();
      if (!trusted) throw new Error(`the ${name} registry could not be rebuilt`);
    },
  };
}
