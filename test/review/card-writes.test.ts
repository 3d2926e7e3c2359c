import { describe, expect } from 'vitest';
import { createDb } from '../../src/db.js';
import { queueVersionKeys } from '../../src/queue-version/keys.js';
import { QueuePages } from '../../src/queue-version/pages.js';
import { keyspace } from '../../src/redis.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { until } from '../helpers/processes.js';

/** How every card write announces itself in Redis (src/queue-version/card-writes.ts), and one process's page memory. */

const keys = (env: TestEnv, accountId: string) => queueVersionKeys(keyspace(env.config.queuePrefix), accountId);
const counter = async (env: TestEnv, accountId: string) => BigInt((await env.deps.redis.get(keys(env, accountId).counter)) ?? '0');
const marks = (env: TestEnv, accountId: string) => env.deps.redis.zcard(keys(env, accountId).writing);

describe('card writes', () => {
  it('bump the queue version twice around a write on the pool, and leave no mark behind', async ({ env }) => {
    const { accountId } = await env.tenant();
    await buildCard(env.deps.db, accountId, 'plain');
    const before = await counter(env, accountId);
    await buildCard(env.deps.db, accountId, 'plain');
    expect(await counter(env, accountId)).toBe(before + 2n);
    expect(await marks(env, accountId)).toBe(0);
  });

  it('in a transaction: marked in flight before the first statement, bumped once the transaction ends (commit or rollback)', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    await buildCard(env.deps.db, accountId, 'plain');
    const start = await counter(env, accountId);
    let inside: [bigint, number] = [0n, 0];
    await env.deps.db.transaction(async (trx) => {
      await buildCard(trx, accountId, 'plain');
      // A nested transaction and a second card: still one mark, bumped after the outermost commit.
      await trx.transaction(async (inner) => buildCard(inner, accountId, 'plain'));
      inside = [await counter(env, accountId), await marks(env, accountId)];
    });
    expect(inside).toEqual([start + 1n, 1]);
    await until0(env, accountId);
    expect(await counter(env, accountId)).toBe(start + 2n);
    await expect(
      env.deps.db.transaction(async (trx) => {
        await buildCard(trx, accountId, 'plain');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await until0(env, accountId);
    expect(await counter(env, accountId)).toBe(start + 4n);
  });

  it('fail loudly on a database handle nobody registered (tests, CHECK_RESPONSES): its write would go unannounced', async ({ env }) => {
    const { accountId } = await env.tenant();
    const stray = createDb(env.config.databaseUrl, 1);
    try {
      await expect(buildCard(stray, accountId, 'plain')).rejects.toThrow(/no card write bumper/);
      expect(await stray('review_cards').where({ account_id: accountId }).count('* as n')).toEqual([{ n: 0 }]);
    } finally {
      await stray.destroy();
    }
  });
});

/** Waits until the account has no write marked in flight (the post-bump follows the commit asynchronously). */
const until0 = (env: TestEnv, accountId: string) => until(async () => (await marks(env, accountId)) === 0);

describe("a process's review pages", () => {
  const v = (key: string, clean = true) => ({ key, clean });

  it('serve a page only under its own version, with no write in flight, until it expires', () => {
    const pages = new QueuePages();
    pages.put('acct', 'q', 'e:1', Buffer.from('page'), 1_000);
    expect(String(pages.get('acct', 'q', v('e:1'), 999))).toBe('page');
    expect(pages.get('acct', 'q', v('e:2'), 999)).toBeUndefined();
    expect(pages.get('acct', 'q', v('e:1', false), 999)).toBeUndefined();
    expect(pages.get('acct', 'other', v('e:1'), 999)).toBeUndefined();
    expect(pages.get('acct', 'q', v('e:1'), 1_000)).toBeUndefined();
    expect(pages.size()).toEqual({ pages: 0, bytes: 0 });
  });

  it('hold at most maxEntries pages and maxBytes of text, least recently used out first', () => {
    const pages = new QueuePages(10, 3);
    for (const q of ['a', 'b', 'c']) pages.put('acct', q, 'e:1', Buffer.from('xx'), 5_000);
    expect(String(pages.get('acct', 'a', v('e:1'), 0))).toBe('xx');
    pages.put('acct', 'd', 'e:1', Buffer.from('xx'), 5_000);
    expect(['a', 'b', 'c', 'd'].map((q) => pages.peek('acct', q, 0) !== undefined)).toEqual([true, false, true, true]);
    pages.put('acct', 'e', 'e:1', Buffer.from('yyyyyyyy'), 5_000);
    expect(pages.size()).toEqual({ pages: 2, bytes: 10 });
    pages.put('acct', 'f', 'e:1', Buffer.from('z'.repeat(11)), 5_000);
    expect(pages.peek('acct', 'f', 0)).toBeUndefined();
  });

  it("forget one account's pages and version on its own write, and everything when the limiter is lost", () => {
    const pages = new QueuePages();
    pages.observe('a', v('e:1'));
    pages.observe('b', v('e:7'));
    pages.put('a', 'q', 'e:1', Buffer.from('A'), 5_000);
    pages.put('b', 'q', 'e:7', Buffer.from('B'), 5_000);
    pages.forget('a');
    expect([pages.last('a'), pages.peek('a', 'q', 0), pages.last('b'), String(pages.peek('b', 'q', 0)?.body)]).toEqual([
      undefined,
      undefined,
      v('e:7'),
      'B',
    ]);
    pages.lost();
    expect([pages.last('b'), pages.size()]).toEqual([undefined, { pages: 0, bytes: 0 }]);
  });
});
