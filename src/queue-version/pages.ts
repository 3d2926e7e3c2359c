import type { QueueVersion } from './keys.js';

interface Entry {
  accountId: string;
  /** The queue version the page was read under (`QueueVersion.key`). */
  version: string;
  /** Date.now() past which the page is not served: its age cap, or the next snoozed card's wake. */
  expiresAt: number;
  body: Buffer;
}

/**
 * One API process's review pages (the body of `GET /review` for an account and exact query), each
 * under the queue version it was read at, and the version the rate limiter last reported for each
 * account. Bounded: at most `maxEntries` pages and `maxBytes` of page bytes, least recently used first
 * out. Everything is dropped when the limiter cannot be reached (`lost`), and an account's pages when
 * this process writes one of its cards (`forget`). See docs/decisions/stores.md, "Reads that skip Postgres".
 */
export class QueuePages {
  private readonly seen = new Map<string, QueueVersion>();
  private readonly pages = new Map<string, Entry>();
  private readonly byAccount = new Map<string, Set<string>>();
  private bytes = 0;

  constructor(
    readonly maxBytes = 32 * 1024 * 1024,
    readonly maxEntries = 10_000,
  ) {}

  /** The limiter's word on the account, in the order Redis ran the calls (one connection: answers come in order). */
  observe(accountId: string, version: QueueVersion): void {
    if (this.seen.size >= this.maxEntries && !this.seen.has(accountId)) this.seen.clear();
    this.seen.set(accountId, version);
  }

  /** The version the latest limiter answer received for the account carried, if any since the last loss. */
  last(accountId: string): QueueVersion | undefined {
    return this.seen.get(accountId);
  }

  /** The limiter could not be reached: nothing seen or cached is trusted any more. */
  lost(): void {
    this.seen.clear();
    this.pages.clear();
    this.byAccount.clear();
    this.bytes = 0;
  }

  /** A card write of the account began or committed in this process. */
  forget(accountId: string): void {
    this.seen.delete(accountId);
    for (const key of this.byAccount.get(accountId) ?? []) this.drop(key);
  }

  /** The page cached for the account and query under any version, while not expired. */
  peek(accountId: string, query: string, now: number): { version: string; body: Buffer } | undefined {
    const key = `${accountId}\n${query}`;
    const entry = this.pages.get(key);
    if (entry && entry.expiresAt <= now) this.drop(key);
    else if (entry) return entry;
    return undefined;
  }

  /** The cached page, when the limiter's `version` says nothing changed since it was read. */
  get(accountId: string, query: string, version: QueueVersion, now: number): Buffer | undefined {
    const entry = this.peek(accountId, query, now);
    if (!entry || !version.clean || entry.version !== version.key) return undefined;
    const key = `${accountId}\n${query}`;
    // Most recently used last: the map's order is the eviction order.
    this.pages.delete(key);
    this.pages.set(key, entry as Entry);
    return entry.body;
  }

  put(accountId: string, query: string, version: string, body: Buffer, expiresAt: number): void {
    const key = `${accountId}\n${query}`;
    this.drop(key);
    if (body.length > this.maxBytes) return;
    this.pages.set(key, { accountId, version, expiresAt, body });
    let keys = this.byAccount.get(accountId);
    if (!keys) this.byAccount.set(accountId, (keys = new Set()));
    keys.add(key);
    this.bytes += body.length;
    for (const oldest of this.pages.keys()) {
      if (this.bytes <= this.maxBytes && this.pages.size <= this.maxEntries) break;
      this.drop(oldest);
    }
  }

  /** Pages held, and their bytes in all (tests, logs). */
  size(): { pages: number; bytes: number } {
    return { pages: this.pages.size, bytes: this.bytes };
  }

  private drop(key: string): void {
    const entry = this.pages.get(key);
    if (!entry) return;
    this.pages.delete(key);
    this.bytes -= entry.body.length;
    const keys = this.byAccount.get(entry.accountId);
    keys?.delete(key);
    if (keys?.size === 0) this.byAccount.delete(entry.accountId);
  }
}
