import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import { POST_BUMP_LUA, PRE_BUMP_LUA, queueVersionKeys, WRITE_DEADLINE_MS } from './keys.js';
import { type CardLiveEvent, liveKeys, PUBLISH_LIVE_LUA } from './live-events.js';

/**
 * Every write to `review_cards` runs through `cardWrite` (src/review/cards/cards.repository.ts is the one
 * writer): the account's queue version is bumped before the statement and again once it has committed
 * (after the statement when it runs alone, after the outermost transaction settles when it runs in
 * one). A process learns how to bump from `registerCardWrites`, called where it builds its database
 * handle (src/deps.ts, the admin CLI). A card write on a handle nobody registered fails loudly under
 * tests and CHECK_RESPONSES, and warns once otherwise: other processes would keep serving a page
 * without it for up to PAGE_MAX_AGE_MS. The same place announces each committed write on the account's live
 * stream (live-events.ts): one publish point for every card write, whoever made it.
 */

type Bumping = Redis & {
  gasQueuePreBump(counter: string, writing: string, id: string, deadlineMs: number): Promise<number>;
  gasQueuePostBump(counter: string, writing: string, id: string): Promise<number>;
  gasLivePublish(stream: string, channel: string, cap: number, event: string): Promise<string>;
};

interface Bumper {
  redis: Bumping;
  keyspace: string;
  logger?: Logger;
  onWrite?: (accountId: string) => void;
  pending: Set<Promise<void>>;
  liveBacklog: number;
}

export interface CardWritesOptions {
  redis: Redis;
  keyspace: string;
  logger?: Logger;
  /** Told of every card write as it begins and once it has committed (the process's own page cache forgets the account). */
  onWrite?: (accountId: string) => void;
  /** Live events kept per account for catch-up (LIVE_BACKLOG_EVENTS). */
  liveBacklog?: number;
}

export interface CardWrites {
  /** Resolves once every post-bump begun so far has landed or given up (before a short-lived process exits). */
  settle(): Promise<void>;
}

/**
 * By the knex client's config object: a knex instance copies its config once, and every transaction
 * of it (nested ones too) shares that object, while the transaction's own client is a new one.
 */
const bumpers = new WeakMap<object, Bumper>();
const configOf = (q: Queryable): object => (q.client as unknown as { config: object }).config;

export function registerCardWrites(db: Queryable, opts: CardWritesOptions): CardWrites {
  if (!('gasQueuePreBump' in opts.redis)) {
    opts.redis.defineCommand('gasQueuePreBump', { numberOfKeys: 2, lua: PRE_BUMP_LUA });
    opts.redis.defineCommand('gasQueuePostBump', { numberOfKeys: 2, lua: POST_BUMP_LUA });
  }
  if (!('gasLivePublish' in opts.redis)) opts.redis.defineCommand('gasLivePublish', { numberOfKeys: 2, lua: PUBLISH_LIVE_LUA });
  const redis = opts.redis as Bumping;
  const bumper: Bumper = {
    redis,
    keyspace: opts.keyspace,
    logger: opts.logger,
    onWrite: opts.onWrite,
    pending: new Set(),
    liveBacklog: opts.liveBacklog ?? 1_000,
  };
  bumpers.set(configOf(db), bumper);
  return {
    async settle() {
      while (bumper.pending.size) await Promise.all([...bumper.pending]);
    },
  };
}

const strict = (): boolean => Boolean(process.env.VITEST) || process.env.NODE_ENV === 'test' || process.env.CHECK_RESPONSES === 'true';
let warned = false;

function bumperOf(q: Queryable): Bumper | null {
  const bumper = bumpers.get(configOf(q));
  if (bumper) return bumper;
  const message =
    'a review card was written through a database handle with no card write bumper (registerCardWrites): ' +
    'API processes may serve a cached review page without it for up to a minute';
  if (strict()) throw new Error(message);
  if (!warned) process.emitWarning(message, 'CardWriteNotAnnounced');
  warned = true;
  return null;
}

/** Post-bump retries: about 13 s in all, then the write is left to its in-flight deadline and the page age cap. */
const RETRY_MS = [100, 200, 400, 800, 1_600, 3_200, 6_400];

/** A write marked in flight; `end` post-bumps it (never throws: a failure is retried in the background, then logged). */
export interface WriteMark {
  end(): Promise<void>;
}

/**
 * Pre-bumps the account's queue version and marks a write in flight (`deadlineMs` is for tests; the
 * service uses WRITE_DEADLINE_MS). When Redis cannot be reached the write still goes ahead and `end`
 * keeps trying: a card write is never refused for the cache's sake (docs/decisions/stores.md, "Reads that skip Postgres").
 */
export async function beginCardWrite(q: Queryable, accountId: string, deadlineMs = WRITE_DEADLINE_MS): Promise<WriteMark | null> {
  const bumper = bumperOf(q);
  if (!bumper) return null;
  const keys = queueVersionKeys(bumper.keyspace, accountId);
  const id = randomUUID();
  bumper.onWrite?.(accountId);
  try {
    await bumper.redis.gasQueuePreBump(keys.counter, keys.writing, id, deadlineMs);
  } catch (err) {
    bumper.logger?.warn({ err: (err as Error).message, accountId }, 'card write could not mark itself in Redis; bumping after it');
  }
  const attempt = () =>
    bumper.redis.gasQueuePostBump(keys.counter, keys.writing, id).then(
      () => {
        bumper.onWrite?.(accountId);
        return true;
      },
      () => false,
    );
  return {
    end() {
      const first = attempt();
      const all = first.then(async (ok) => {
        for (const ms of RETRY_MS) {
          if (ok) return;
          await new Promise((r) => setTimeout(r, ms).unref());
          ok = await attempt();
        }
        if (!ok) bumper.logger?.error({ accountId }, 'card write committed but its queue version could not be bumped; caches expire it');
      });
      bumper.pending.add(all);
      void all.finally(() => bumper.pending.delete(all));
      return first.then(() => {});
    },
  };
}

interface Transactor {
  isTransaction?: boolean;
  executionPromise?: Promise<unknown>;
  parentTransaction?: Transactor;
}

/** Per outermost transaction: the accounts already marked, so a transaction bumps each account once. */
const marked = new WeakMap<Transactor, Map<string, Promise<unknown>>>();
/** Per outermost transaction: the live events of its card writes, published in order once it commits (never after a rollback). */
const announced = new WeakMap<Transactor, Array<{ accountId: string; event: CardLiveEvent }>>();

/** What a card write announces, from the statement's result (null: nothing to announce, e.g. a guarded update that lost). */
export type Announce<T> = (result: T) => CardLiveEvent | null;

/** Publishes committed writes' events in order; a Redis failure is logged (the write stands, readers catch up by reloading). */
async function publish(q: Queryable, events: Array<{ accountId: string; event: CardLiveEvent }>): Promise<void> {
  const bumper = bumpers.get(configOf(q));
  if (!bumper) return;
  for (const { accountId, event } of events) {
    const keys = liveKeys(bumper.keyspace, accountId);
    try {
      await bumper.redis.gasLivePublish(keys.stream, keys.channel, bumper.liveBacklog, JSON.stringify(event));
    } catch (err) {
      bumper.logger?.warn(
        { err: (err as Error).message, accountId, cardId: event.cardId },
        'card write committed but its live event could not be published',
      );
    }
  }
}

/** The outermost knex transaction `q` runs in, or null when it is the pool itself. */
function outermost(q: Queryable): Transactor | null {
  let t = q as unknown as Transactor;
  if (!t.isTransaction) return null;
  while (t.parentTransaction) t = t.parentTransaction;
  if (!t.executionPromise) throw new Error('a knex transaction without executionPromise: cannot bump after its commit');
  return t;
}

/**
 * Runs one card statement for `accountId` between the two bumps. Alone on the pool: pre-bump,
 * statement, post-bump (the first attempt awaited). In a transaction: pre-bump before the account's
 * first statement in it, post-bump once the outermost transaction has committed or rolled back.
 */
export async function cardWrite<T>(q: Queryable, accountId: string, statement: () => Promise<T>, announce?: Announce<T>): Promise<T> {
  const top = outermost(q);
  if (!top) {
    const mark = await beginCardWrite(q, accountId);
    let result: T;
    try {
      result = await statement();
    } finally {
      await mark?.end();
    }
    const event = announce?.(result);
    if (event) await publish(q, [{ accountId, event }]);
    return result;
  }
  let accounts = marked.get(top);
  if (!accounts) marked.set(top, (accounts = new Map()));
  let begun = accounts.get(accountId);
  if (!begun) {
    const mark = beginCardWrite(q, accountId);
    accounts.set(accountId, (begun = mark));
    const end = () =>
      void mark.then(
        (m) => m?.end(),
        () => {},
      );
    top.executionPromise!.then(end, end);
  }
  await begun;
  const result = await statement();
  const event = announce?.(result);
  if (event) {
    let events = announced.get(top);
    if (!events) {
      announced.set(top, (events = []));
      const list = events;
      const published = top.executionPromise!.then(
        () => publish(q, list),
        () => {},
      );
      // A short-lived process (the admin CLI) waits for it in `settle`, as for the post-bumps.
      const bumper = bumpers.get(configOf(q));
      bumper?.pending.add(published);
      void published.finally(() => bumper?.pending.delete(published));
    }
    events.push({ accountId, event });
  }
  return result;
}
