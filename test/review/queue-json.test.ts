import { describe, expect } from 'vitest';
import { ReviewItemResponse, ReviewListResponse } from '../../api/routes/review.schemas.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { cardView } from '../../src/review/queue.service.js';
import { it } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';

/**
 * `GET /review` sends cards as Postgres renders them (plus the computed fields); `GET /review/{id}` and
 * every other reader map rows through `cardView`. The two must be the same object for every card.
 */

describe('the queue page rendered by Postgres', () => {
  it('is exactly cardView of each card, for every kind and awkward value', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const db = env.deps.db;
    const t = Date.now();
    const awkward = 'quote " backslash \\ tab \t newline \n nul-free \u0001 \u001f emoji 😀 rtl \u202e combining e\u0301 \u2028';
    const made = [
      await buildCard(db, accountId, 'approval', { createdAt: t - 1 }),
      await buildCard(db, accountId, 'question', { createdAt: t - 2, detail: { why: awkward, nested: [1, 2.5, -0, 1e21, null, true] } }),
      await buildCard(db, accountId, 'choice', { createdAt: t - 3, options: ['A', { value: 'b', label: 'Bee' }, { value: 'c' }, 7] }),
      await buildCard(db, accountId, 'mail_draft', {
        createdAt: t - 4,
        title: awkward,
        prompt: awkward,
        summary: '',
        leadId: 'lead_x',
        leadContactId: 'lc_y',
        dueAt: t + 9,
      }),
      await buildCard(db, accountId, 'mail_reply', { createdAt: t - 5, priority: 'urgent', autoResolveAt: t + 60_000 }),
      await buildCard(db, accountId, 'budget', { createdAt: t - 6, priority: 'low' }),
      await buildCard(db, accountId, 'outbound_setup', { createdAt: t - 7, priority: 'high', postId: 'post_z' }),
      await buildCard(db, accountId, 'approval', {
        createdAt: t - 8,
        status: 'needs_revision',
        payload: { work: 'blog_post', body: 'x'.repeat(9000), list: [{ a: {} }, []] },
      }),
      await buildCard(db, accountId, 'approval', { createdAt: t - 9, priority: 'made-up band' }),
    ];
    const res = await env.api().get('/api/v1/review?limit=100').set(auth(token));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const { items } = ReviewListResponse.parse(res.body);
    expect(items).toHaveLength(made.length);
    for (const item of items) {
      const stored = await cardsRepository(db).find(accountId, item.id);
      expect(item).toStrictEqual(cardView(stored!));
      const byId = ReviewItemResponse.parse((await env.api().get(`/api/v1/review/${item.id}`).set(auth(token))).body).item;
      expect(item).toStrictEqual(byId);
    }
  });

  it('renders a card to the same bytes in every list and by id, in the compact form of every other answer', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'choice', {
      status: 'needs_revision',
      detail: { why: 'quote " and \u2028', nested: { list: [1, 2.5, null, { a: 'b' }] } },
      payload: { work: 'email', draft: { subject: 'S', body: 'line\nline' } },
    });
    const text = async (url: string) => {
      const res = await env.api().get(url).set(auth(token));
      expect(res.status).toBe(200);
      return res.text;
    };
    const inList = (page: string) => {
      expect(page.startsWith('{"items":[') && page.endsWith(']}')).toBe(true);
      return page.slice('{"items":['.length, -2);
    };
    const byDefault = inList(await text('/api/v1/review'));
    const byStatus = inList(await text('/api/v1/review?status=needs_revision'));
    const byId = (await text(`/api/v1/review/${card.id}`)).slice('{"item":'.length, -1);
    expect(byStatus).toBe(byDefault);
    expect(byId).toBe(byDefault);
    // No space around the top level's colons and commas: `"id":"card_…"`, as `res.json` writes.
    expect(byDefault.startsWith(`{"id":"${card.id}","kind":"choice","sourceType":`)).toBe(true);
    expect(JSON.parse(byDefault)).toStrictEqual(cardView((await cardsRepository(env.deps.db).find(accountId, card.id))!));
  });

  it('shows a snoozed card whose time has come as pending, woken, in its place', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const t = Date.now();
    const first = await buildCard(env.deps.db, accountId, 'approval', { createdAt: t - 10 });
    const due = await buildCard(env.deps.db, accountId, 'question', { createdAt: t, status: 'snoozed', snoozedUntil: t - 1 });
    const later = await buildCard(env.deps.db, accountId, 'question', { createdAt: t + 5, status: 'snoozed', snoozedUntil: t + 3_600_000 });
    const { items } = ReviewListResponse.parse((await env.api().get('/api/v1/review').set(auth(token))).body);
    expect(items.map((c) => c.id)).toEqual([due.id, first.id]);
    expect(items[0]).toMatchObject({ status: 'pending', snoozedUntil: null, actions: ['answer', 'approve', 'snooze', 'dismiss'] });
    expect(items.map((c) => c.id)).not.toContain(later.id);
    expect((await cardsRepository(env.deps.db).find(accountId, due.id))!.status).toBe('pending');
  });
});
