import { describe, expect } from 'vitest';
import { until } from '../helpers/processes.js';
import { SendResponse } from '../../api/routes/review.schemas.js';
import { addToBlocklist } from '../../src/blocklist/blocklist.service.js';
import { it } from '../helpers/fixture.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

it.override('options', ({ smtp }) => ({
  env: {
    ...smtpEnv(smtp),
    MAIL_SEND_TIMEOUT_MS: '3000',
    MAIL_RETRY_AFTER_SECONDS: '7',
    MAIL_RECONCILE_DELAY_MS: '100',
    MAIL_RECONCILE_WINDOW_MS: '1500',
  },
  pools: ['shipments'],
}));

const copiesOf = (smtp: TestSmtp, cardSubject: string) => smtp.received.filter((m) => m.raw.includes(cardSubject)).length;

describe('POST /review/{id}/send over SMTP', () => {
  it('sends a mail draft once, marks the card sent and records a channel event decided by a person', async ({ smtp, env }) => {
    smtp.mode = { kind: 'accept' };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'jane@acme.test', draft: { subject: 'subject-one', body: 'Hello' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    const body = SendResponse.parse(res.body);
    expect(body).toMatchObject({ ok: true, status: 'sent', to: 'jane@acme.test', decidedBy: 'person' });
    expect(copiesOf(smtp, 'subject-one')).toBe(1);
    const item = (await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item;
    expect(item).toMatchObject({ status: 'sent', actions: [], primaryLabel: 'Sent' });
    expect(item.resolution).toMatchObject({ action: 'send', by: 'person', sendId: body.sendId });
    const events = await rows(env, 'channel_events', { account_id: accountId, ref_id: body.sendId });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ channel: 'email', type: 'sent', decided_by: 'person' });
    const again = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('rejected');
    expect(copiesOf(smtp, 'subject-one')).toBe(1);
  });

  it('sends exactly one message when 50 callers send the same card at once', async ({ smtp, env }) => {
    smtp.mode = { kind: 'slow', delayMs: 200 };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'many@acme.test', draft: { subject: 'subject-fifty', body: 'Once' } },
    });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({})),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    for (const r of results.filter((r) => r.status === 409)) expect(['invalid_action', 'rejected']).toContain(r.body.error);
    expect(copiesOf(smtp, 'subject-fifty')).toBe(1);
    const fences = await rows(env, 'shipments', { card_id: card.id });
    expect(fences).toHaveLength(1);
    smtp.mode = { kind: 'accept' };
  });

  it('sends a reply with the given body instead of the draft', async ({ smtp, env }) => {
    smtp.mode = { kind: 'accept' };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_reply', {
      payload: { work: 'email', to: 'bo@globex.test', draft: { subject: 'subject-reply', body: 'draft words' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({ body: 'edited words' });
    expect(res.status).toBe(200);
    const mail = smtp.received.find((m) => m.raw.includes('subject-reply'));
    expect(mail?.raw).toContain('edited words');
    expect(mail?.raw).not.toContain('draft words');
  });

  it(
    'answers 503 delivery_pending when the server takes the message and drops the connection, never sends a second copy, ' +
      'and settles through a person',
    async ({ smtp, env }) => {
      smtp.mode = { kind: 'drop' };
      const { token, accountId } = await env.tenant();
      const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
        payload: { work: 'email', to: 'drop@acme.test', draft: { subject: 'subject-drop', body: 'Maybe' } },
      });
      const first = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
      expect(first.status).toBe(503);
      expect(first.body).toEqual({ error: 'delivery_pending', message: expect.any(String) });
      expect(first.headers['retry-after']).toBe('7');
      smtp.mode = { kind: 'accept' };
      for (let i = 0; i < 3; i++) {
        const retry = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
        expect(retry.status).toBe(503);
        expect(retry.body.error).toBe('delivery_pending');
      }
      expect(copiesOf(smtp, 'subject-drop')).toBe(1);
      // SMTP cannot be asked whether it went: past the window a person is asked, never a blind resend.
      const question = await until(async () => row(env, 'review_cards', { account_id: accountId, source_type: 'mail_delivery_unknown' }));
      const q = (await env.api().get(`/api/v1/review/${question.id}`).set(auth(token))).body.item;
      expect(q).toMatchObject({ status: 'pending', kind: 'choice', actions: ['choose'], priority: 'urgent' });
      const listed = (await env.api().get('/api/v1/review').set(auth(token))).body.items.map((c: { id: string }) => c.id);
      expect(listed).toContain(question.id);
      expect(copiesOf(smtp, 'subject-drop')).toBe(1);
      const ans = await env
        .api()
        .post(`/api/v1/review/${question.id}/answer`)
        .set(auth(token))
        .send({ action: 'choose', optionValues: ['mark_sent'] });
      expect(ans.status).toBe(200);
      const item = (await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item;
      expect(item.status).toBe('sent');
      const retry = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
      expect(retry.status).toBe(409);
      expect(copiesOf(smtp, 'subject-drop')).toBe(1);
    },
  );

  it('takes a 5xx reply to the message itself as a hard bounce: 409 rejected, nothing sent, the card settled', async ({ smtp, env }) => {
    smtp.mode = { kind: 'refuse', code: 554 };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'nia@acme.test', draft: { subject: 'subject-554', body: 'Hi' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'rejected' });
    expect(res.body.message).toMatch(/^the mail service refused the message: .*554/);
    expect((await rows(env, 'shipments', { card_id: card.id })).map((f: { status: string }) => f.status)).toEqual(['not_sent']);
    const item = (await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item;
    expect(item).toMatchObject({ status: 'resolved', actions: [], resolution: { action: 'send', bounced: true } });
    smtp.mode = { kind: 'accept' };
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({})).status).toBe(409);
    expect(copiesOf(smtp, 'subject-554')).toBe(0);
  });

  it('takes a 4xx reply to the message itself as not sent: 503 unavailable, and the same send later goes out once', async ({
    smtp,
    env,
  }) => {
    smtp.mode = { kind: 'refuse', code: 451 };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'oz@acme.test', draft: { subject: 'subject-451', body: 'Hi' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('unavailable');
    expect(res.headers['retry-after']).toBe('7');
    smtp.mode = { kind: 'accept' };
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({})).status).toBe(200);
    expect((await rows(env, 'shipments', { card_id: card.id }).orderBy('created_at')).map((f: { status: string }) => f.status)).toEqual([
      'not_sent',
      'sent',
    ]);
    expect(copiesOf(smtp, 'subject-451')).toBe(1);
  });

  it('puts the card back when a person says the mail did not arrive, and the next send goes out once', async ({ smtp, env }) => {
    smtp.mode = { kind: 'drop' };
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'lost@acme.test', draft: { subject: 'subject-lost', body: 'Again' } },
    });
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({})).status).toBe(503);
    smtp.mode = { kind: 'accept' };
    const question = await until(async () => row(env, 'review_cards', { account_id: accountId, source_type: 'mail_delivery_unknown' }));
    const ans = await env
      .api()
      .post(`/api/v1/review/${question.id}/answer`)
      .set(auth(token))
      .send({ action: 'choose', optionValues: ['mark_not_sent'] });
    expect(ans.status).toBe(200);
    expect((await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item).toMatchObject({
      status: 'pending',
      actions: ['send', 'request_changes', 'snooze', 'dismiss'],
    });
    const again = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(again.status).toBe(200);
    expect(copiesOf(smtp, 'subject-lost')).toBe(2);
    const fences = await rows(env, 'shipments', { card_id: card.id }).orderBy('created_at');
    expect(fences.map((f: { status: string }) => f.status)).toEqual(['not_sent', 'sent']);
  });

  it('answers 409 rejected when the recipient is on the block list, and sends nothing', async ({ smtp, env }) => {
    smtp.mode = { kind: 'accept' };
    const { token, accountId } = await env.tenant();
    await addToBlocklist(env.deps.db, accountId, ['acme-blocked.test'], 'api', 'test');
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'x@acme-blocked.test', draft: { subject: 'subject-blocked', body: 'no' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'rejected', message: expect.stringContaining('block list') });
    expect(copiesOf(smtp, 'subject-blocked')).toBe(0);
    expect((await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item.status).toBe('pending');
  });

  it('answers 400 for a body on a mail draft, an empty or blank body, and 409 for a card that is not mail', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const draft = await buildCard(env.deps.db, accountId, 'mail_draft');
    const reply = await buildCard(env.deps.db, accountId, 'mail_reply');
    const approval = await buildCard(env.deps.db, accountId, 'approval');
    const a = await env.api().post(`/api/v1/review/${draft.id}/send`).set(auth(token)).send({ body: 'x' });
    expect(a.status).toBe(400);
    expect(a.body.error).toMatch(/^body /);
    const b = await env.api().post(`/api/v1/review/${reply.id}/send`).set(auth(token)).send({ body: '' });
    expect(b.status).toBe(400);
    expect(b.body).toEqual({ error: 'body must not be empty' });
    // Only whitespace is empty too (spec: "cannot be empty if present"), as for request-changes text.
    for (const blank of [' ', '\n\t \r\n', '\u00a0\u2003']) {
      const w = await env.api().post(`/api/v1/review/${reply.id}/send`).set(auth(token)).send({ body: blank });
      expect(w.status).toBe(400);
      expect(w.body).toEqual({ error: 'body must not be empty' });
    }
    expect((await env.api().get(`/api/v1/review/${reply.id}`).set(auth(token))).body.item.status).toBe('pending');
    const c = await env.api().post(`/api/v1/review/${approval.id}/send`).set(auth(token)).send({});
    expect(c.status).toBe(409);
    expect(c.body).toEqual({ error: 'invalid_action', actions: ['approve', 'request_changes', 'snooze', 'dismiss'] });
  });
});
