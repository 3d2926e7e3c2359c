import { describe, expect } from 'vitest';
import { ContentPostResponse, ContentPostsPage } from '../../api/routes/content.schemas.js';
import { adminCall } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { approve, auth, blogCard, published, siteToken } from './helpers.js';
import { waitFor } from '../helpers/processes.js';
import { rows } from '../helpers/rows.js';

describe('publishing a blog_post card', () => {
  it('publishes on approve; a content:read token lists and reads it, and is refused the review queue', async ({ env }) => {
    const t = await env.tenant();
    const card = await blogCard(env.deps.db, t.accountId, {
      title: 'How freight brokers cut quote time',
      markdown: 'Quoting is slow.\n\n## What to automate\n\nStart with lanes.',
      tags: ['freight', 'automation'],
      author: 'Sam',
    });
    const res = await approve(env, t.token, card.id);
    expect(res.status).toBe(200);

    const site = await siteToken(env, t.accountId);
    const list = await env.api().get('/api/v1/content/posts').set(auth(site));
    expect(list.status).toBe(200);
    const page = ContentPostsPage.parse(list.body);
    expect(page.nextCursor).toBeNull();
    expect(page.posts).toHaveLength(1);
    const post = page.posts[0]!;
    expect(post).toMatchObject({
      slug: 'how-freight-brokers-cut-quote-time',
      title: 'How freight brokers cut quote time',
      excerpt: 'Quoting is slow.',
      markdown: 'Quoting is slow.\n\n## What to automate\n\nStart with lanes.',
      html: '<p>Quoting is slow.</p>\n<h2>What to automate</h2>\n<p>Start with lanes.</p>',
      tags: ['freight', 'automation'],
      author: 'Sam',
      url: null,
    });
    expect(post.publishedAt).toBe(post.updatedAt);

    const one = await env.api().get(`/api/v1/content/posts/${post.slug}`).set(auth(site));
    expect(one.status).toBe(200);
    expect(ContentPostResponse.parse(one.body).post).toEqual(post);

    expect((await env.api().get('/api/v1/review').set(auth(site))).status).toBe(403);
    const reviewer = await env.tenant(['review:read', 'review:write']);
    const refused = await env.api().get('/api/v1/content/posts').set(auth(reviewer.token));
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'forbidden', requiredScope: 'content:read' });

    const item = (await env.api().get(`/api/v1/review/${card.id}`).set(auth(t.token))).body.item;
    expect(item.status).toBe('sent');
    const events = await rows(env, 'channel_events', { account_id: t.accountId });
    expect(events.map((e) => [e.channel, e.type])).toEqual([['seo', 'post_published']]);
  });

  it('answers a retried approve 409 and publishes once', async ({ env }) => {
    const t = await env.tenant();
    const card = await blogCard(env.deps.db, t.accountId, { title: 'Once only' });
    expect((await approve(env, t.token, card.id)).status).toBe(200);
    const again = await approve(env, t.token, card.id);
    expect(again.status).toBe(409);
    expect(await rows(env, 'post_publications', { account_id: t.accountId })).toHaveLength(1);
    expect(await rows(env, 'posts', { account_id: t.accountId })).toHaveLength(1);
  });

  it('gives two cards with the same title approved at once two different slugs', async ({ env }) => {
    const t = await env.tenant();
    const a = await blogCard(env.deps.db, t.accountId, { title: 'Same title' });
    const b = await blogCard(env.deps.db, t.accountId, { title: 'Same title' });
    const answers = await Promise.all([approve(env, t.token, a.id), approve(env, t.token, b.id)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    const slugs = (await rows(env, 'posts', { account_id: t.accountId }).pluck('slug')).sort();
    expect(slugs).toEqual(['same-title', 'same-title-2']);
  });

  it('updates the post a later card names by slug: publishedAt kept, updatedAt and the ETag move, no second channel event', async ({
    env,
  }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Pricing guide', markdown: 'First version.' });
    const site = await siteToken(env, t.accountId);
    const before = await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(site));
    // The next write's clock must read later than the first's: wait for the millisecond to turn, not a fixed time.
    await waitFor(async () => Date.now() > before.body.post.updatedAt, 'the clock to pass the first updatedAt', 5_000);
    await published(env, t, { title: 'Pricing guide (2027)', markdown: 'Second version.', slug, tags: ['pricing'] });
    const after = await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(site));
    expect(after.body.post).toMatchObject({ slug, title: 'Pricing guide (2027)', markdown: 'Second version.', tags: ['pricing'] });
    expect(after.body.post.publishedAt).toBe(before.body.post.publishedAt);
    expect(after.body.post.updatedAt).toBeGreaterThan(before.body.post.updatedAt);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(await rows(env, 'posts', { account_id: t.accountId })).toHaveLength(1);
    expect(await rows(env, 'post_publications', { account_id: t.accountId }).orderBy('at').pluck('op')).toEqual(['publish', 'update']);
    expect(await rows(env, 'channel_events', { account_id: t.accountId, type: 'post_published' })).toHaveLength(1);
  });

  it('unpublishes by slug: 404 and gone from the list; an unknown slug is 409 naming it, nothing written', async ({ env }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Going away' });
    await published(env, t, { title: 'Staying' });
    const site = await siteToken(env, t.accountId);
    const down = await blogCard(env.deps.db, t.accountId, { title: 'Take it down', op: 'unpublish', slug });
    expect((await approve(env, t.token, down.id)).status).toBe(200);
    expect((await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(site))).status).toBe(404);
    const list = await env.api().get('/api/v1/content/posts').set(auth(site));
    expect(list.body.posts.map((p: { slug: string }) => p.slug)).toEqual(['staying']);

    const ghost = await blogCard(env.deps.db, t.accountId, { title: 'Nothing there', op: 'unpublish', slug: 'no-such-post' });
    const refused = await approve(env, t.token, ghost.id);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'rejected',
      message: 'there is no post with the slug "no-such-post" to unpublish; nothing was changed',
    });
    expect((await env.api().get(`/api/v1/review/${ghost.id}`).set(auth(t.token))).body.item.status).toBe('pending');
    expect(await rows(env, 'posts', { account_id: t.accountId })).toHaveLength(2);
    expect(await rows(env, 'shipments', { card_id: ghost.id })).toEqual([]);
  });

  it("publishes the seed demo's waiting blog_post card when it is approved", async ({ env }) => {
    const t = await env.tenant();
    // `seed demo` fills demo accounts only: this one becomes one (as `seed demo --new-account` makes them).
    await env.deps.db('accounts').where({ id: t.accountId }).update({ demo: true });
    const { out } = await adminCall(env, ['seed', 'demo', '--account', t.accountId]);
    const card = (out!.cards as { id: string; sourceType: string }[]).find((c) => c.sourceType === 'blog_post')!;
    expect((await approve(env, t.token, card.id)).status).toBe(200);
    const post = (await env.api().get('/api/v1/content/posts/how-freight-brokers-cut-quote-time-by-80').set(auth(t.token))).body.post;
    expect(post).toMatchObject({ title: 'How freight brokers cut quote time by 80%', tags: ['freight', 'quoting', 'automation'] });
    expect(post.html).toContain('<h2>What to automate first</h2>');
    expect(post.html).toContain(`<a href="${env.config.baseUrl}/l/`);
  });

  it("refuses a new post without a body (409, nothing written); an update without a body keeps the post's", async ({ env }) => {
    const t = await env.tenant();
    const empty = await blogCard(env.deps.db, t.accountId, { title: 'Empty', markdown: '  ' });
    const refused = await approve(env, t.token, empty.id);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toBe('this post has no body; nothing was published: request changes so the agent writes it');
    expect(await rows(env, 'posts', { account_id: t.accountId })).toEqual([]);

    const { slug } = await published(env, t, { title: 'Keep my body', markdown: 'The body stays.', tags: ['kept'], author: 'Sam' });
    await published(env, t, { title: 'Keep my body', markdown: '', slug, author: 'Ana' });
    const post = (await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token))).body.post;
    expect(post).toMatchObject({ markdown: 'The body stays.', html: '<p>The body stays.</p>', tags: ['kept'], author: 'Ana' });
    await published(env, t, { title: 'Keep my body', markdown: 'New body.', slug, tags: [] });
    const again = (await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token))).body.post;
    expect(again).toMatchObject({ markdown: 'New body.', tags: [], author: 'Ana' });
  });
});
