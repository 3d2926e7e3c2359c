import { describe, expect } from 'vitest';
import { AnswerResponse, ReviewItemResponse, ReviewListResponse } from '../../api/routes/review.schemas.js';
import { addToBlocklist } from '../../src/blocklist/blocklist.service.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { raiseTrust, trustLevel } from '../../src/review/trust.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { until as waitUntil } from '../helpers/processes.js';
import { rows } from '../helpers/rows.js';

it.override('options', { env: { MAIL_TRANSPORT: 'local', MAIL_LOCAL_DIR: `/tmp/gas-review-api-${process.pid}` } });

const post = (env: TestEnv, token: string, id: string, verb: string, body: unknown) =>
  env
    .api()
    .post(`/api/v1/review/${id}/${verb}`)
    .set(auth(token))
    .send(body as object);
const get = async (env: TestEnv, token: string, id: string) =>
  ReviewItemResponse.parse((await env.api().get(`/api/v1/review/${id}`).set(auth(token))).body).item;

describe('GET /review', () => {
  it('lists pending and needs_revision cards by priority band, newest first within a band', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const t = Date.now();
    const low = await buildCard(env.deps.db, accountId, 'approval', { priority: 'low', createdAt: t - 1000 });
    const oldUrgent = await buildCard(env.deps.db, accountId, 'question', { priority: 'urgent', createdAt: t - 5000 });
    const newUrgent = await buildCard(env.deps.db, accountId, 'choice', { priority: 'urgent', createdAt: t - 100 });
    const normal = await buildCard(env.deps.db, accountId, 'mail_draft', { createdAt: t });
    const revising = await buildCard(env.deps.db, accountId, 'approval', { status: 'needs_revision', createdAt: t - 50 });
    await buildCard(env.deps.db, accountId, 'approval', { status: 'resolved' });
    await buildCard(env.deps.db, accountId, 'approval', { status: 'dismissed' });
    const res = await env.api().get('/api/v1/review').set(auth(token));
    expect(res.status).toBe(200);
    const { items } = ReviewListResponse.parse(res.body);
    expect(items.map((c) => c.id)).toEqual([newUrgent.id, oldUrgent.id, normal.id, revising.id, low.id]);
    const pendingOnly = ReviewListResponse.parse((await env.api().get('/api/v1/review?status=pending&limit=2').set(auth(token))).body);
    expect(pendingOnly.items.map((c) => c.id)).toEqual([newUrgent.id, oldUrgent.id]);
    const rev = ReviewListResponse.parse((await env.api().get('/api/v1/review?status=needs_revision').set(auth(token))).body);
    expect(rev.items.map((c) => c.id)).toEqual([revising.id]);
  });

  it('answers 400 naming limit and status when they are out of range', async ({ env }) => {
    const { token } = await env.tenant();
    for (const q of ['limit=0', 'limit=101', 'limit=abc']) {
      const res = await env.api().get(`/api/v1/review?${q}`).set(auth(token));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'limit must be an integer from 1 to 100' });
    }
    const s = await env.api().get('/api/v1/review?status=resolved').set(auth(token));
    expect(s.status).toBe(400);
    expect(s.body.error).toMatch(/^status must be one of/);
  });

  it('derives actions and primaryLabel from kind, sourceType and status', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const cases: Array<[Parameters<typeof buildCard>[2], string[], string]> = [
      ['approval', ['approve', 'request_changes', 'snooze', 'dismiss'], 'Approve'],
      ['budget', ['approve', 'request_changes', 'snooze', 'dismiss'], 'Approve spend'],
      ['question', ['answer', 'approve', 'snooze', 'dismiss'], 'Answer'],
      ['choice', ['choose', 'snooze', 'dismiss'], 'Choose'],
      ['mail_draft', ['send', 'request_changes', 'snooze', 'dismiss'], 'Send'],
      ['mail_reply', ['send', 'request_changes', 'snooze', 'dismiss'], 'Send reply'],
    ];
    for (const [kind, actions, label] of cases) {
      const card = await buildCard(env.deps.db, accountId, kind);
      expect(await get(env, token, card.id)).toMatchObject({ actions, primaryLabel: label, status: 'pending' });
    }
    const choice = await get(env, token, (await buildCard(env.deps.db, accountId, 'choice')).id);
    expect(choice.options).toEqual([
      { value: 'A', label: 'A' },
      { value: 'B', label: 'B' },
      { value: 'C', label: 'C' },
    ]);
    for (const status of ['resolved', 'sent', 'dismissed', 'sending']) {
      const card = await buildCard(env.deps.db, accountId, 'approval', { status });
      expect((await get(env, token, card.id)).actions).toEqual([]);
    }
    expect((await get(env, token, (await buildCard(env.deps.db, accountId, 'approval', { status: 'needs_revision' })).id)).actions).toEqual(
      ['dismiss'],
    );
  });
});

describe('GET /review/{id}', () => {
  it('reads a card in any status with its full payload, and 404s for another account', async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const long = 'é'.repeat(6000);
    const card = await buildCard(env.deps.db, a.accountId, 'approval', { status: 'dismissed', payload: { draft: { body: long } } });
    const item = await get(env, a.token, card.id);
    expect(item.status).toBe('dismissed');
    expect(Buffer.byteLength((item.payload.draft as { body: string }).body, 'utf8')).toBeLessThanOrEqual(8192);
    const other = await env.api().get(`/api/v1/review/${card.id}`).set(auth(b.token));
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: 'not found' });
    expect((await env.api().get('/api/v1/review/card_nope').set(auth(a.token))).status).toBe(404);
  });

  it('answers 403 naming the scope when the token lacks review:read', async ({ env }) => {
    const { token } = await env.tenant(['leads:read']);
    const res = await env.api().get('/api/v1/review').set(auth(token));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'review:read' });
    const w = await env.tenant(['review:read']);
    const res2 = await post(env, w.token, 'card_x', 'dismiss', {});
    expect(res2.body).toEqual({ error: 'forbidden', requiredScope: 'review:write' });
  });
});

describe('POST /review/{id}/answer', () => {
  it('approves an approval card once; a second approve is 409 invalid_action with empty actions', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'plain');
    const res = await post(env, token, card.id, 'answer', { action: 'approve' });
    expect(res.status).toBe(200);
    expect(AnswerResponse.parse(res.body)).toMatchObject({ ok: true, kind: 'approval', result: { action: 'approve', by: 'person' } });
    const item = await get(env, token, card.id);
    expect(item).toMatchObject({ status: 'resolved', actions: [], resolution: { action: 'approve', by: 'person' } });
    expect(item.resolvedAt).toEqual(expect.any(Number));
    const again = await post(env, token, card.id, 'answer', { action: 'approve' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'invalid_action', actions: [] });
  });

  it('answers a question with text, and 400s an answer without text', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'question');
    const bad = await post(env, token, card.id, 'answer', { action: 'answer' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'text is required when action is answer' });
    const res = await post(env, token, card.id, 'answer', { action: 'answer', text: 'Start with the Midwest' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, kind: 'question', result: { action: 'answer', text: 'Start with the Midwest' } });
  });

  it('chooses exactly one of the option values', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'choice');
    for (const optionValues of [[], ['A', 'B'], ['Z'], undefined]) {
      const res = await post(env, token, card.id, 'answer', { action: 'choose', optionValues });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^optionValues must be exactly one of the card's option values/);
    }
    const ok = await post(env, token, card.id, 'answer', { action: 'choose', optionValues: ['B'] });
    expect(ok.status).toBe(200);
    expect(ok.body.result).toMatchObject({ action: 'choose', optionValues: ['B'] });
  });

  it('answers 409 invalid_action with current actions for a verb the card does not offer', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'approval');
    const res = await post(env, token, card.id, 'answer', { action: 'choose', optionValues: ['A'] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'invalid_action', actions: ['approve', 'request_changes', 'snooze', 'dismiss'] });
  });

  it('answers 409 use_send for a mail card, with a message and the actions', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    for (const kind of ['mail_draft', 'mail_reply'] as const) {
      const card = await buildCard(env.deps.db, accountId, kind);
      const res = await post(env, token, card.id, 'answer', { action: 'approve' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        error: 'use_send',
        message: expect.stringContaining('/send'),
        actions: ['send', 'request_changes', 'snooze', 'dismiss'],
      });
    }
  });

  it('answers 409 rejected with a message when the recipient is on the block list', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    await addToBlocklist(env.deps.db, accountId, ['https://www.linkedin.com/in/dana'], 'api', 'test');
    const card = await buildCard(env.deps.db, accountId, 'plain', { payload: { to: 'https://www.linkedin.com/in/dana' } });
    const res = await post(env, token, card.id, 'answer', { action: 'approve' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'rejected', message: expect.stringContaining('block list') });
    expect((await get(env, token, card.id)).status).toBe('pending');
  });

  it('answers 400 for a bad action and text over 8,000 UTF-8 bytes, and 404 across accounts', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const other = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'question');
    const a = await post(env, token, card.id, 'answer', { action: 'ship' });
    expect(a.status).toBe(400);
    expect(a.body.error).toMatch(/^action must be one of/);
    const b = await post(env, token, card.id, 'answer', { action: 'answer', text: 'é'.repeat(4001) });
    expect(b.body).toEqual({ error: 'text must be at most 8,000 UTF-8 bytes' });
    const ok = await post(env, token, card.id, 'answer', { action: 'answer', text: 'é'.repeat(4000) });
    expect(ok.status).toBe(200);
    const c = await post(env, other.token, card.id, 'answer', { action: 'answer', text: 'x' });
    expect(c.status).toBe(404);
  });
});

describe('POST /review/{id}/request-changes', () => {
  it('moves the card to needs_revision and refuses a second request with 409', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    const res = await post(env, token, card.id, 'request-changes', { text: 'Shorter, and mention the Reno site' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const item = await get(env, token, card.id);
    expect(item).toMatchObject({ status: 'needs_revision', actions: ['dismiss'], autoResolveAt: null });
    const again = await post(env, token, card.id, 'request-changes', { text: 'again' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'invalid_action', actions: ['dismiss'] });
    const q = await buildCard(env.deps.db, accountId, 'question');
    const onQuestion = await post(env, token, q.id, 'request-changes', { text: 'x' });
    expect(onQuestion.body).toEqual({ error: 'invalid_action', actions: ['answer', 'approve', 'snooze', 'dismiss'] });
  });

  it('answers 400 when text is missing, empty or over 8,000 UTF-8 bytes', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'approval');
    expect((await post(env, token, card.id, 'request-changes', {})).body).toEqual({ error: 'text is required' });
    expect((await post(env, token, card.id, 'request-changes', { text: '' })).body).toEqual({ error: 'text must not be empty' });
    expect((await post(env, token, card.id, 'request-changes', { text: 'a'.repeat(8001) })).body).toEqual({
      error: 'text must be at most 8,000 UTF-8 bytes',
    });
  });
});

describe('POST /review/{id}/snooze', () => {
  it('hides the card until `until`, cancels autoResolveAt, and returns it afterwards', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'approval', { autoResolveAt: Date.now() + 3_600_000 });
    const until = Date.now() + 400;
    const res = await post(env, token, card.id, 'snooze', { until });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 'snoozed', snoozedUntil: until });
    expect(await get(env, token, card.id)).toMatchObject({ status: 'snoozed', snoozedUntil: until, autoResolveAt: null });
    const hidden = ReviewListResponse.parse((await env.api().get('/api/v1/review').set(auth(token))).body);
    expect(hidden.items.map((c) => c.id)).not.toContain(card.id);
    // Read again until the snooze has run out and the card is back (the read wakes it), rather than sleeping past `until`.
    const back = await waitUntil(async () => {
      const page = ReviewListResponse.parse((await env.api().get('/api/v1/review').set(auth(token))).body);
      return page.items.some((c) => c.id === card.id) && page;
    }, 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    expect(back.items.find((c) => c.id === card.id)).toMatchObject({ status: 'pending', snoozedUntil: null, autoResolveAt: null });
  });

  it('wakes a due snoozed card on read and places it in the page by band and age', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const t = Date.now();
    const due = { status: 'snoozed', snoozedUntil: t - 1_000 };
    const newest = await buildCard(env.deps.db, accountId, 'approval', { createdAt: t });
    const dueMiddle = await buildCard(env.deps.db, accountId, 'approval', { ...due, createdAt: t - 10 });
    const oldest = await buildCard(env.deps.db, accountId, 'approval', { createdAt: t - 20 });
    const dueOutside = await buildCard(env.deps.db, accountId, 'approval', { ...due, createdAt: t - 30 });
    const stillSnoozed = await buildCard(env.deps.db, accountId, 'approval', {
      status: 'snoozed',
      snoozedUntil: t + 3_600_000,
      createdAt: t - 5,
    });
    const first = ReviewListResponse.parse((await env.api().get('/api/v1/review?limit=1').set(auth(token))).body);
    expect(first.items.map((c) => c.id)).toEqual([newest.id]);
    const page = ReviewListResponse.parse((await env.api().get('/api/v1/review?limit=3').set(auth(token))).body);
    expect(page.items.map((c) => [c.id, c.status])).toEqual([
      [newest.id, 'pending'],
      [dueMiddle.id, 'pending'],
      [oldest.id, 'pending'],
    ]);
    const pending = ReviewListResponse.parse((await env.api().get('/api/v1/review?status=pending').set(auth(token))).body);
    expect(pending.items.map((c) => [c.id, c.status])).toEqual(
      [newest.id, dueMiddle.id, oldest.id, dueOutside.id].map((id) => [id, 'pending']),
    );
    expect(await get(env, token, stillSnoozed.id)).toMatchObject({ status: 'snoozed' });
  });

  it('answers 400 for an `until` in the past or not an integer, and 409 on a closed card', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'approval');
    expect((await post(env, token, card.id, 'snooze', { until: Date.now() - 1 })).body).toEqual({ error: 'until must be in the future' });
    expect((await post(env, token, card.id, 'snooze', { until: 'tomorrow' })).status).toBe(400);
    expect((await post(env, token, card.id, 'snooze', {})).body).toEqual({ error: 'until is required' });
    const done = await buildCard(env.deps.db, accountId, 'approval', { status: 'resolved' });
    expect((await post(env, token, done.id, 'snooze', { until: Date.now() + 60_000 })).body).toEqual({
      error: 'invalid_action',
      actions: [],
    });
  });
});

describe('POST /review/{id}/dismiss', () => {
  it('closes the card, resets trust for that kind of work and teaches the agent the reason', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, accountId, 'network_message');
    expect(await trustLevel(env.deps.db, accountId, 'network_message')).toBe(3);
    const card = await buildCard(env.deps.db, accountId, 'approval');
    const res = await post(env, token, card.id, 'dismiss', { reason: 'Dana left Northwind last month' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 'dismissed' });
    expect(await get(env, token, card.id)).toMatchObject({
      status: 'dismissed',
      actions: [],
      resolution: { action: 'dismiss', reason: 'Dana left Northwind last month' },
    });
    expect(await trustLevel(env.deps.db, accountId, 'network_message')).toBe(0);
    const memory = await rows(env, 'agent_memory', { account_id: accountId }).pluck('text');
    expect(memory.some((t: string) => t.includes('Dana left Northwind last month'))).toBe(true);
    const again = await post(env, token, card.id, 'dismiss', {});
    expect(again.body).toEqual({ error: 'invalid_action', actions: [] });
  });

  it('cancels the proposal of an outbound-setup card, accepts no body, and 400s a reason over 2,000 characters', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'outbound_setup');
    expect((await post(env, token, card.id, 'dismiss', { reason: '😀'.repeat(2001) })).body).toEqual({
      error: 'reason must be at most 2,000 characters',
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/dismiss`).set(auth(token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 'dismissed', proposal: 'cancelled' });
    expect((await get(env, token, card.id)).resolution).toMatchObject({ proposal: 'cancelled' });
    const revising = await buildCard(env.deps.db, accountId, 'approval', { status: 'needs_revision' });
    expect((await post(env, token, revising.id, 'dismiss', { reason: '😀'.repeat(2000) })).status).toBe(200);
  });
});

describe('every verb on every closed status', () => {
  it('answers 409 invalid_action with the current actions, never a change', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const verbs: Array<[string, unknown]> = [
      ['answer', { action: 'approve' }],
      ['request-changes', { text: 'x' }],
      ['snooze', { until: Date.now() + 60_000 }],
      ['dismiss', {}],
    ];
    for (const status of ['resolved', 'sent', 'dismissed', 'sending', 'needs_revision']) {
      const card = await buildCard(env.deps.db, accountId, 'approval', { status });
      for (const [verb, body] of verbs) {
        if (status === 'needs_revision' && verb === 'dismiss') continue;
        const res = await post(env, token, card.id, verb, body);
        expect(res.status, `${verb} on ${status}`).toBe(409);
        expect(res.body).toEqual({ error: 'invalid_action', actions: status === 'needs_revision' ? ['dismiss'] : [] });
      }
      expect((await cardsRepository(env.deps.db).find(accountId, card.id))?.status).toBe(status);
    }
  });

  it('answers 409 to send on a mail card in every closed status: rejected once sent, invalid_action otherwise', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const expected: Record<string, unknown> = {
      resolved: { error: 'invalid_action', actions: [] },
      dismissed: { error: 'invalid_action', actions: [] },
      sending: { error: 'invalid_action', actions: [] },
      needs_revision: { error: 'invalid_action', actions: ['dismiss'] },
      sent: { error: 'rejected', message: expect.stringContaining('already sent') },
    };
    for (const [status, body] of Object.entries(expected)) {
      const card = await buildCard(env.deps.db, accountId, 'mail_draft', { status });
      const res = await post(env, token, card.id, 'send', {});
      expect(res.status, status).toBe(409);
      expect(res.body).toEqual(body);
    }
  });

  it('accepts every open verb on a snoozed card', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const snoozed = { status: 'snoozed', snoozedUntil: Date.now() + 3_600_000 };
    const a = await buildCard(env.deps.db, accountId, 'plain', snoozed);
    expect((await post(env, token, a.id, 'answer', { action: 'approve' })).status).toBe(200);
    const b = await buildCard(env.deps.db, accountId, 'approval', snoozed);
    expect((await post(env, token, b.id, 'request-changes', { text: 'warmer' })).status).toBe(200);
    const c = await buildCard(env.deps.db, accountId, 'approval', snoozed);
    expect((await post(env, token, c.id, 'snooze', { until: Date.now() + 7_200_000 })).status).toBe(200);
    const d = await buildCard(env.deps.db, accountId, 'approval', snoozed);
    expect((await post(env, token, d.id, 'dismiss', {})).status).toBe(200);
    const e = await buildCard(env.deps.db, accountId, 'mail_draft', snoozed);
    expect((await post(env, token, e.id, 'send', {})).status).toBe(200);
    const audited = await rows(env, 'audit_log', { account_id: accountId, method: 'POST' })
      .whereLike('route', '/api/v1/review/%')
      .pluck('route');
    expect(audited.sort()).toEqual(
      [
        '/api/v1/review/{id}/answer',
        '/api/v1/review/{id}/dismiss',
        '/api/v1/review/{id}/request-changes',
        '/api/v1/review/{id}/send',
        '/api/v1/review/{id}/snooze',
      ].sort(),
    );
  });

  it("answers 404 for every verb on another account's card", async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const card = await buildCard(env.deps.db, a.accountId, 'mail_draft');
    for (const [verb, body] of [
      ['answer', { action: 'approve' }],
      ['send', {}],
      ['request-changes', { text: 'x' }],
      ['snooze', { until: Date.now() + 60_000 }],
      ['dismiss', {}],
    ] as const) {
      const res = await post(env, b.token, card.id, verb, body);
      expect(res.status, verb).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
    }
  });
});
