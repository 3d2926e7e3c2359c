import pg from 'pg';
import type { Queryable } from '../db.js';

/** The channel a change to an account's posts (or its blog base URL) is announced on, with the account id. */
export const CONTENT_CHANNEL = 'content_changed';
const MAX_ENTRIES = 10_000;
const RECONNECT_MS = 5_000;

/** A post as last sent: its JSON and strong ETag. */
export interface CachedPost {
  json: string;
  etag: string;
}

interface Entry extends CachedPost {
  epoch: number;
  generation: number;
}

/** What a reader saw before it read Postgres: its entry is kept only if nothing changed meanwhile. */
export interface Ticket {
  epoch: number;
  generation: number;
}

/**
 * One process's memory of published posts (`GET /content/posts/{slug}` answers a matching If-None-Match
 * without asking Postgres). It is used only while this process LISTENs on CONTENT_CHANNEL: every
 * publication and blog-URL change NOTIFYs it in its own transaction, so every process forgets the
 * account's posts as the change commits. A read that raced a change is not kept (the account's generation
 * moved), and while the listener is down (not yet connected, lost) the memory is bypassed, never trusted.
 * With no URL to listen on (behind a transaction pooler, which cannot carry LISTEN, without
 * DATABASE_DIRECT_URL) it never listens, so it is always bypassed.
 */
class PostCache {
  private readonly entries = new Map<string, Entry>();
  private readonly generations = new Map<string, number>();
  /** Moves whenever the listener goes down: nothing remembered before counts. */
  private epoch = 0;
  private live = false;
  private connecting = false;
  private stopped = false;

  constructor(private readonly databaseUrl: string | null) {}

  private key = (accountId: string, slug: string) => `${accountId}\u0000${slug}`;
  private generation = (accountId: string) => this.generations.get(accountId) ?? 0;

  /** Connects the listener in the background; the cache works once it is listening. */
  private listen(): void {
    if (this.live || this.connecting || this.stopped || this.databaseUrl === null) return;
    this.connecting = true;
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3_000 });
    const down = (err?: unknown) => {
      client.removeAllListeners();
      client.on('error', () => undefined);
      client.end().catch(() => undefined);
      this.live = false;
      this.connecting = false;
      this.epoch++;
      this.entries.clear();
      // The database is gone (a dropped test database): stop trying.
      if ((err as { code?: string } | undefined)?.code === '3D000') this.stopped = true;
      else setTimeout(() => this.listen(), RECONNECT_MS).unref();
    };
    client.on('error', down);
    client.on('end', () => down());
    client.on('notification', (n) => {
      if (n.payload) this.changed(n.payload);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CONTENT_CHANNEL}`))
      .then(() => {
        // An idle listener must not keep a process from exiting.
        (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
        this.connecting = false;
        this.live = true;
      })
      .catch(down);
  }

  /** The remembered post, when the listener is live and nothing changed since it was remembered. */
  get(accountId: string, slug: string): CachedPost | undefined {
    if (!this.live) {
      this.listen();
      return undefined;
    }
    const e = this.entries.get(this.key(accountId, slug));
    return e && e.epoch === this.epoch && e.generation === this.generation(accountId) ? e : undefined;
  }

  /** Taken before reading Postgres; `put` keeps the read only if this still holds. */
  ticket(accountId: string): Ticket | null {
    return this.live ? { epoch: this.epoch, generation: this.generation(accountId) } : null;
  }

  put(accountId: string, slug: string, t: Ticket | null, post: CachedPost): void {
    if (!t || !this.live || t.epoch !== this.epoch || t.generation !== this.generation(accountId)) return;
    const key = this.key(accountId, slug);
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { ...post, epoch: this.epoch, generation: t.generation });
  }

  /** Forgets the account's posts (a notification, or this process's own change). */
  changed(accountId: string): void {
    this.generations.set(accountId, this.generation(accountId) + 1);
  }
}

const caches = new Map<string | null, PostCache>();

/** The process's post memory for the database it LISTENs on (db.ts listenUrl); null: none, always bypassed. */
export function postCache(databaseUrl: string | null): PostCache {
  let c = caches.get(databaseUrl);
  if (!c) caches.set(databaseUrl, (c = new PostCache(databaseUrl)));
  return c;
}

/** Announces, in the caller's transaction (delivered as it commits), that the account's posts changed. */
export async function announceContentChange(q: Queryable, accountId: string): Promise<void> {
  await q.raw('select pg_notify(?, ?)', [CONTENT_CHANNEL, accountId]);
}
