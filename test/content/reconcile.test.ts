import { describe, expect } from 'vitest';
import { adapterFor } from '../../src/channels/registry.js';
import { cardsRepository, type Card } from '../../src/review/cards/cards.repository.js';
import { fencesRepository, type Fence } from '../../src/shipping/fence.repository.js';
import { fenceWork, markPending } from '../../src/shipping/fence.service.js';
import { reconcileSend } from '../../src/shipping/reconcile.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth, blogCard, siteToken } from './helpers.js';
import { row, rows } from '../helpers/rows.js';

/** What shipCard does before it calls the adapter: the card claimed and its fence (and post reservation) written. */
async function fenced(env: TestEnv, card: Card): Promise<Fence> {
  const adapter = adapterFor(env.config, env.deps.db, 'blog_post')!;
  return env.deps.db.transaction(async (trx) => {
    const claimed = await cardsRepository(trx).transition(
      card.accountId,
      card.id,
      { statuses: ['pending'], version: card.version },
      { status: 'sending' },
    );
    expect(claimed).not.toBeNull();
    return fenceWork(trx, adapter, card, adapter.workOf(card), { step: 0, decidedBy: 'person' });
  });
}

describe('a publication whose answer was lost', () => {
  it('is found by lookup and settled once, with no second publication', async ({ env }) => {
    const t = await env.tenant();
    const card = await blogCard(env.deps.db, t.accountId, { title: 'Lost answer' });
    const fence = await fenced(env, card);
    const adapter = adapterFor(env.config, env.deps.db, 'blog_post')!;
    // The post went out, but the shipping path never heard so.
    const shipped = await adapter.ship({ ...adapter.workOf(card), body: fence.body, details: fence.details }, fence.idempotencyKey);
    await markPending(env.deps, adapter, fence, 'answer lost (test)');
    expect((await fencesRepository(env.deps.db).find(t.accountId, fence.id))?.status).toBe('pending');

    expect(await adapter.lookup(fence.idempotencyKey, fence)).toEqual({ state: 'sent', providerId: shipped.providerId });
    expect(await reconcileSend(env.deps, t.accountId, fence.id)).toBe('settled');
    expect(await reconcileSend(env.deps, t.accountId, fence.id)).toBe('noop');

    const settled = await fencesRepository(env.deps.db).find(t.accountId, fence.id);
    expect(settled).toMatchObject({ status: 'sent', providerId: shipped.providerId });
    expect((await cardsRepository(env.deps.db).find(t.accountId, card.id))?.status).toBe('sent');
    expect(await rows(env, 'post_publications', { account_id: t.accountId })).toHaveLength(1);
    expect(await rows(env, 'channel_events', { account_id: t.accountId, type: 'post_published' })).toHaveLength(1);
    // A second ship under the same key changes nothing and answers the same post.
    const before = await row(env, 'posts', { id: shipped.providerId });
    expect(await adapter.ship({ ...adapter.workOf(card), body: 'changed', details: fence.details }, fence.idempotencyKey)).toEqual(shipped);
    expect(await row(env, 'posts', { id: shipped.providerId })).toEqual(before);
    const site = await siteToken(env, t.accountId);
    const list = await env.api().get('/api/v1/content/posts').set(auth(site));
    expect(list.body.posts.map((p: { slug: string }) => p.slug)).toEqual(['lost-answer']);
  });

  it('is shipped again under the same key when lookup finds nothing, and publishes once', async ({ env }) => {
    const t = await env.tenant();
    const card = await blogCard(env.deps.db, t.accountId, { title: 'Never arrived' });
    const fence = await fenced(env, card);
    const adapter = adapterFor(env.config, env.deps.db, 'blog_post')!;
    await markPending(env.deps, adapter, fence, 'answer lost before the commit (test)');
    expect(await adapter.lookup(fence.idempotencyKey, fence)).toEqual({ state: 'not_found' });
    expect(await reconcileSend(env.deps, t.accountId, fence.id)).toBe('settled');
    expect(await rows(env, 'post_publications', { account_id: t.accountId })).toHaveLength(1);
    const post = await row(env, 'posts', { account_id: t.accountId });
    expect(post).toMatchObject({ slug: 'never-arrived', status: 'published', card_id: card.id });
  });
});
