import { FIXED_WINDOW_COUNT, fixedWindowBlockedFor, keyspace, type Redis, wholeSeconds } from '../redis.js';

/**
 * Wrong Bull Board logins counted per address in Redis, so every API process sees the same count.
 * One key per address with the window as its TTL (a fixed window from the first failure): the keys
 * are few bytes each and expire on their own, however many addresses try.
 */
export interface BoardLoginGuard {
  /** Seconds until this address may try again (0: not blocked). */
  blockedFor(address: string): Promise<number>;
  /** Counts one wrong login: the failures in the window so far and the seconds the window has left. */
  failed(address: string): Promise<{ failures: number; windowLeft: number }>;
}

export function boardLoginGuard(
  redis: Redis,
  queuePrefix: string,
  limits: { maxFailures: number; windowSeconds: number },
): BoardLoginGuard {
  const key = (address: string) => `${keyspace(queuePrefix)}:board-login:${address}`;
  return {
    async blockedFor(address) {
      return fixedWindowBlockedFor(redis, key(address), limits.maxFailures);
    },
    async failed(address) {
      const [failures, ttl] = (await redis.eval(FIXED_WINDOW_COUNT, 1, key(address), limits.windowSeconds * 1000)) as [number, number];
      return { failures: Number(failures), windowLeft: wholeSeconds(Number(ttl)) };
    },
  };
}
