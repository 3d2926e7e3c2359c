import { Unavailable } from '../errors.js';
import { isCluster, type Redis } from '../redis.js';
import type { Principal } from './tokens.types.js';

/**
 * An API process remembers the principal of a token it has resolved in Postgres, so most requests make
 * no Postgres round trip for authentication. It trusts what it remembers only on the word of the rate
 * limiter's script, which every authenticated request runs anyway (src/rate-limit.ts), and which reads
 * two keys in the account's hash slot:
 * - `revoked:<tokenId>`: set by revokeToken BEFORE the revocation is committed in Postgres. Present →
 *   the process forgets the token and asks Postgres (which answers 401 once the revocation committed).
 *   So a revocation holds from the very next call, in every process, with no message to deliver.
 * - `epoch`: made by the script when missing. Redis losing its data (a restart without persistence, a
 *   flush) loses every mark, but also the epoch: the new one differs from the one remembered, and every
 *   remembered token is asked of Postgres again.
 * When the limiter cannot be reached the process forgets everything and asks Postgres each time, and
 * a revocation that cannot set its mark is refused (nothing changes; the operator retries).
 */
export function authGuardKeys(keyspace: string, accountId: string, tokenId: string): { epoch: string; revoked: string } {
  return { epoch: `${keyspace}:auth:{${accountId}}:epoch`, revoked: `${keyspace}:auth:{${accountId}}:revoked:${tokenId}` };
}

/** How long a revocation mark outlives the revocation: far beyond the longest a principal is remembered. */
export const REVOCATION_MARK_SECONDS = 7 * 24 * 3600;

/** The longest a process trusts a remembered principal before it asks Postgres again, marks or not. */
export const REMEMBER_MS = 5 * 60_000;

/** How long a revocation waits for a replica of a Redis Cluster master to hold its mark. */
export const REPLICA_WAIT_MS = 1_000;

/**
 * Marks a token revoked for every API process. Throws Unavailable when Redis cannot take the mark: the
 * caller must then not revoke in Postgres either, or a process that remembers the token would keep it.
 * On a Redis Cluster the mark must also reach a replica of its master (WAIT, in the same pipeline, so on
 * the same node): replication is asynchronous, and a master that died just after taking the mark would
 * be replaced by a replica without it, so processes remembering the token would keep trusting it. When
 * no replica acknowledged within REPLICA_WAIT_MS while the master knows one that has not failed (even one
 * whose link is down for now: it may still be promoted), the revocation is refused (Unavailable) like a
 * mark Redis could not take; the mark left behind only sends the token to Postgres until it expires.
 */
export async function markRevoked(redis: Redis, keyspace: string, accountId: string, tokenId: string): Promise<void> {
  const key = authGuardKeys(keyspace, accountId, tokenId).revoked;
  const at = String(Date.now());
  let replicated = true;
  try {
    if (!isCluster(redis)) await redis.set(key, at, 'EX', REVOCATION_MARK_SECONDS);
    else {
      const replies =
        (await redis.pipeline().set(key, at, 'EX', REVOCATION_MARK_SECONDS).wait(1, REPLICA_WAIT_MS).cluster('NODES').exec()) ?? [];
      const failed = replies.find(([err]) => err);
      if (failed) throw failed[0];
      replicated = Number(replies[1]?.[1] ?? 0) >= 1 || replicasOf(String(replies[2]?.[1] ?? '')) === 0;
    }
  } catch {
    throw new Unavailable();
  }
  if (!replicated) throw new Unavailable();
}

/** How many replicas not marked failed the node that answered `CLUSTER NODES` (`myself`) has. */
function replicasOf(nodes: string): number {
  const lines = nodes.split('\n').map((l) => l.split(' '));
  const me = lines.find((f) => f[2]?.split(',').includes('myself'))?.[0];
  return lines.filter(
    (f) => me && f[3] === me && !f[2]?.split(',').some((flag) => flag === 'fail' || flag === 'noaddr' || flag === 'nofailover'),
  ).length;
}

export interface Remembered<X = undefined> {
  principal: Principal;
  /** What else the caller keeps beside the principal (a dashboard session: its person and last-seen time). */
  extra: X;
  epoch: string;
  until: number;
  /** Requests left in each rate bucket after this token's last call here (the tighter of token and account). */
  left: Record<string, number>;
}

/**
 * One process's memory of resolved tokens (or dashboard sessions), by the secret's hash. Bounded in size and
 * age: an entry is trusted at most REMEMBER_MS, or until `until` when the caller gives an earlier end.
 */
export class PrincipalMemory<X = undefined> {
  private readonly entries = new Map<string, Remembered<X>>();

  constructor(private readonly maxEntries = 10_000) {}

  get(hash: string, now: number): Remembered<X> | undefined {
    const entry = this.entries.get(hash);
    if (entry && entry.until > now) return entry;
    if (entry) this.entries.delete(hash);
    return undefined;
  }

  /** Remembers a token Postgres said is live; answers the entry, whose `left` the caller keeps up to date. */
  remember(hash: string, principal: Principal, epoch: string, now: number, extra?: X, until = Infinity): Remembered<X> {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const entry = { principal, epoch, until: Math.min(now + REMEMBER_MS, until), left: {}, extra: extra as X };
    this.entries.set(hash, entry);
    return entry;
  }

  forget(hash: string): void {
    this.entries.delete(hash);
  }

  forgetAll(): void {
    this.entries.clear();
  }
}
