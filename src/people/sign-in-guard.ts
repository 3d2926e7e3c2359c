import { FIXED_WINDOW_COUNT, fixedWindowBlockedFor, keyspace, type Redis } from '../redis.js';
import { secretHash } from './secrets.js';

/**
 * Failed sign-ins counted in Redis per address and per client network (every API process sees the same
 * counts), each a key with the window as its TTL, a fixed window from its first failure (the Bull Board's
 * login guard's shape). An address is counted whether or not a person holds it, so the 429 tells nothing.
 * The address is keyed by its hash: no one's address sits in Redis.
 */
export interface SignInLimits {
  addressFailures: number;
  networkFailures: number;
  windowSeconds: number;
}

export function signInGuard(redis: Redis, queuePrefix: string, limits: SignInLimits, kind = 'signin') {
  const base = `${keyspace(queuePrefix)}:dashboard-${kind}`;
  const addressKey = (email: string) => `${base}:a:${secretHash(email)}`;
  const networkKey = (network: string) => `${base}:n:${network}`;
  return {
    /** Seconds until this address from this network may try again (0: not blocked). */
    async blockedFor(email: string, network: string): Promise<number> {
      const [a, n] = await Promise.all([
        fixedWindowBlockedFor(redis, addressKey(email), limits.addressFailures),
        fixedWindowBlockedFor(redis, networkKey(network), limits.networkFailures),
      ]);
      return Math.max(a, n);
    },
    /** Counts one failure against the address and the network. */
    async failed(email: string, network: string): Promise<void> {
      const window = limits.windowSeconds * 1000;
      await Promise.all([
        redis.eval(FIXED_WINDOW_COUNT, 1, addressKey(email), window),
        redis.eval(FIXED_WINDOW_COUNT, 1, networkKey(network), window),
      ]);
    },
    /** A good sign-in clears its address's count (the network's stays). */
    async succeeded(email: string): Promise<void> {
      await redis.del(addressKey(email));
    },
  };
}

export type SignInGuard = ReturnType<typeof signInGuard>;
