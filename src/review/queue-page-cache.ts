import { PAGE_MAX_AGE_MS, type QueueVersion } from '../queue-version/keys.js';
import type { QueuePages } from '../queue-version/pages.js';
import { cardsRepository } from './cards/cards.repository.js';
import { listCards, type BeforeWrite } from './queue.service.js';
import type { ReviewDeps } from './review.types.js';

/** What a request brings to the page cache: the process's pages, and the limiter's word on this call. */
export interface PageCacheRequest {
  pages: QueuePages;
  /**
   * This call's queue version, once the limiter has answered it (a GET may begin beside the limiter);
   * null when the limiter could not be reached or the call was not admitted.
   */
  version: () => Promise<QueueVersion | null>;
}

/**
 * The body of `GET /review` (`{"items":[…]}`, UTF-8 bytes), from this process's cache when the limiter's answer for
 * this call says the account's queue has not changed since the page was read, else from Postgres
 * (docs/decisions/stores.md, "Reads that skip Postgres"). A page read from Postgres is kept only when it is
 * known to be the page of the version it is kept under: the version the limiter reported just before
 * the read began (the latest answer this process had for the account) and the one it reported for this
 * call are the same, with no card write in flight at either. A read that woke snoozed cards is not
 * kept; a kept page expires at its age cap or when the account's next snoozed card wakes.
 */
export async function cachedQueuePage(
  deps: ReviewDeps,
  accountId: string,
  q: { status?: string; limit: number },
  beforeWrite: BeforeWrite,
  cache: PageCacheRequest,
): Promise<Buffer> {
  const { pages } = cache;
  const query = `${q.status ?? '*'} ${q.limit}`;
  const held = pages.peek(accountId, query, Date.now());
  const last = pages.last(accountId);
  // Very likely current: wait for this call's word rather than read Postgres beside the limiter.
  if (held && last?.clean && last.key === held.version) {
    const version = await cache.version();
    // Not admitted: begun work stops here (beforeWrite rejects); limiter out of reach: read Postgres.
    if (!version) await beforeWrite();
    const body = version && pages.get(accountId, query, version, Date.now());
    if (body) return body;
  }
  const before = pages.last(accountId);
  const startedAt = Date.now();
  const page = await listCards(deps, accountId, q, beforeWrite);
  const body = Buffer.from(`{"items":${page.items}}`);
  const version = await cache.version();
  if (version?.clean && before?.clean && before.key === version.key && !page.woke) {
    const nextWake = page.nextWake === undefined ? await cardsRepository(deps.db).nextWake(accountId, startedAt) : page.nextWake;
    pages.put(accountId, query, version.key, body, Math.min(startedAt + PAGE_MAX_AGE_MS, nextWake ?? Number.POSITIVE_INFINITY));
  }
  return body;
}
