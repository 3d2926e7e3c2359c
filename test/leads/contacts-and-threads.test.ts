import { simpleParser, type ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import { LeadResponse, LeadsPage } from '../../api/routes/leads.schemas.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { mailLoopOptions, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { inboundTo, leadRow, row, rows, sequenceOfCard } from '../helpers/rows.js';
import { sequenceDueAt } from '../helpers/aged-rows.js';

/**
 * A lead per company with a status per contact, through the real API and the real mail path: the agent
 * drafts (offline brain, POST /agent/messages), a person sends, the SMTP stand-in gets the mail, the
 * reply comes back over SMTP to the inbound listener, a one-click POST unsubscribes. Jane and Bob work at
 * the same company (acme.test); no lead is recorded beforehand.
 */
it.override('options', ({ smtp }) => mailLoopOptions(smtp));

const JANE = 'jane@acme.test';
const BOB = 'bob@acme.test';
/** An account, with the fixtures its mail goes through (the SMTP stand-in out, our inbound listener back). */
type World = { token: string; accountId: string; env: TestEnv; smtp: TestSmtp; inbound: InboundSmtp };

async function world(fixtures: Pick<World, 'env' | 'smtp' | 'inbound'>): Promise<World> {
  const { token, accountId } = await fixtures.env.tenant(['agent:message', 'review:read', 'review:write', 'leads:read', 'results:read']);
  return { ...fixtures, token, accountId };
}

async function say(w: World, text: string): Promise<void> {
  const res = await w.env.api().post('/api/v1/agent/messages').set(auth(w.token)).send({ text, waitSeconds: 10 });
  expect(res.status).toBe(200);
  expect(res.body.message.status).toBe('replied');
}

async function waiting(w: World, sourceType: string) {
  const res = await w.env.api().get('/api/v1/review').set(auth(w.token));
  expect(res.status).toBe(200);
  return (res.body.items as { id: string; sourceType: string; payload: Record<string, unknown> }[]).filter(
    (c) => c.sourceType === sourceType,
  );
}

const lastTo = (w: World, to: string) => w.smtp.received.filter((m) => m.to.includes(to)).at(-1);

/** Sends a waiting mail card through the API and answers the mail as the SMTP stand-in got it. */
async function send(w: World, cardId: string, to: string): Promise<ParsedMail> {
  const before = w.smtp.received.length;
  const res = await w.env.api().post(`/api/v1/review/${cardId}/send`).set(auth(w.token)).send({});
  expect(res.status).toBe(200);
  expect(w.smtp.received.length).toBe(before + 1);
  return simpleParser(lastTo(w, to)!.raw);
}

/** Starts a sequence to `to` and approves it: its first mail goes out. */
async function runningSequence(w: World, to: string, topic: string): Promise<{ cardId: string; first: ParsedMail }> {
  await say(w, `start a sequence to ${to} about ${topic}`);
  const [card] = await waiting(w, 'sequence');
  expect((await w.env.api().post(`/api/v1/review/${card!.id}/answer`).set(auth(w.token)).send({ action: 'approve' })).status).toBe(200);
  return { cardId: card!.id, first: await simpleParser(lastTo(w, to)!.raw) };
}

/** Jane's answer as Gmail writes it, over SMTP to the inbound listener, until the inbound pool settled it. */
async function janeReplies(w: World, sent: ParsedMail, again = false): Promise<void> {
  const replyTo = sent.replyTo!.value[0]!.address!;
  const replyToken = /^reply\+([0-9a-z]+)@/.exec(replyTo)![1]!;
  const fixture = mailFixture('gmail-reply', { replyToken, messageId: sent.messageId! });
  // A second answer is another message (its own Message-ID).
  const raw = again ? Buffer.from(fixture.toString('latin1').replace('<CAJx9Lr7', '<CAJx9Lr8'), 'latin1') : fixture;
  expect((await smtpSend(w.inbound.port, { from: JANE, to: [replyTo], raw })).code).toBe(250);
  await until(async () => {
    const rows = await inboundTo(w.env, replyTo);
    return rows.length === (again ? 2 : 1) && rows.every((r) => r.status !== 'received') ? rows : null;
  }, 15_000);
}

async function leads(w: World, status?: string) {
  const res = await w.env
    .api()
    .get('/api/v1/leads')
    .query(status ? { status } : {})
    .set(auth(w.token));
  expect(res.status).toBe(200);
  return LeadsPage.parse(res.body).leads;
}

async function lead(w: World, id: string) {
  const res = await w.env.api().get(`/api/v1/leads/${id}`).set(auth(w.token));
  expect(res.status).toBe(200);
  return LeadResponse.parse(res.body).lead;
}

const sequenceOf = (w: World, cardId: string) => sequenceOfCard(w.env, cardId);
const header = (m: ParsedMail, key: string) => (m.headerLines.find((h) => h.key === key)?.line ?? '').replace(/\r?\n[ \t]+/g, ' ');

describe('every mailed address has a lead, and a follow-up threads under the reply', () => {
  it('a draft to an address no lead covers makes the lead (source agent); the reply shows in /leads?status=replied', async ({
    env,
    smtp,
    inbound,
  }) => {
    const w = await world({ env, smtp, inbound });
    expect(await leads(w)).toEqual([]);
    await say(w, `draft an email to ${JANE} about a quick idea for Acme`);
    const [card] = await waiting(w, 'mail_draft');
    const sent = await send(w, card!.id, JANE);

    const [made] = await leads(w);
    expect(made).toMatchObject({ domain: 'acme.test', status: 'contacted', contact: { email: JANE, status: 'contacted' } });
    expect((await leadRow(env, made!.id)).source).toBe('agent');

    await janeReplies(w, sent);
    const replied = await leads(w, 'replied');
    expect(replied.map((l) => l.id)).toEqual([made!.id]);
    expect(replied[0]).toMatchObject({ replyKind: 'interested', contact: { email: JANE, status: 'replied', replyKind: 'interested' } });

    // The agent's follow-up answers Jane's reply, not our first mail, and carries the whole chain.
    const [followUp] = await until(async () => {
      const drafts = await waiting(w, 'mail_draft');
      return drafts.length ? drafts : null;
    }, 15_000);
    const replyId = '<CAJx9Lr7f0PqZ3kV1m2Jd8yWq4Hc5uT0bN6s+Qp_2vXw@mail.gmail.com>';
    expect(followUp!.payload).toMatchObject({ to: JANE, inReplyTo: replyId, references: [sent.messageId, replyId] });
    // A second answer from Jane folds into the waiting follow-up: the thread is still our mail.
    await janeReplies(w, sent, true);
    expect(await rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' })).toHaveLength(1);
    const answer = await send(w, followUp!.id, JANE);
    expect(answer.inReplyTo).toBe(replyId);
    expect(answer.references).toEqual([sent.messageId, replyId]);
    expect(header(answer, 'in-reply-to')).toBe(`In-Reply-To: ${replyId}`);
    // Still one lead for the company, Jane its one contact.
    expect((await lead(w, made!.id)).contacts.map((c) => c.email)).toEqual([JANE]);
  });
});

describe('a status per contact', () => {
  it("Jane's reply stops Bob's sequence naming Jane; Bob's one-click unsubscribe leaves the lead replied", async ({
    env,
    smtp,
    inbound,
  }) => {
    const w = await world({ env, smtp, inbound });
    const bob = await runningSequence(w, BOB, 'onboarding');
    await say(w, `draft an email to ${JANE} about a quick idea for Acme`);
    const [card] = await waiting(w, 'mail_draft');
    const sent = await send(w, card!.id, JANE);
    const [company] = await leads(w);
    expect((await lead(w, company!.id)).contacts.map((c) => [c.email, c.status])).toEqual([
      [BOB, 'contacted'],
      [JANE, 'contacted'],
    ]);

    await janeReplies(w, sent);
    expect(await sequenceOf(w, bob.cardId)).toMatchObject({ status: 'stopped', stop_reason: `${JANE}, at the same company, replied` });

    const url = /<(https?:\/\/[^>]+\/u\/[0-9a-z]+)>/.exec(header(bob.first, 'list-unsubscribe'))![1]!;
    const res = await env.api().post(new URL(url).pathname).type('form').send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);

    const after = await lead(w, company!.id);
    expect(after).toMatchObject({ status: 'replied', replyKind: 'interested' });
    expect(after.contacts.map((c) => [c.email, c.status])).toEqual([
      [BOB, 'unsubscribed'],
      [JANE, 'replied'],
    ]);
    const replied = await leads(w, 'replied');
    expect(replied.map((l) => [l.id, l.contact?.email])).toEqual([[company!.id, JANE]]);
    expect(await leads(w, 'unsubscribed')).toEqual([]);
  });

  it("with the account set to let colleagues' sequences continue, a reply stops only the replier's", async ({ env, smtp, inbound }) => {
    const w = await world({ env, smtp, inbound });
    const set = await adminCall(env, ['leads', 'reply-stops', '--account', w.accountId, '--company', 'continue']);
    expect(set.out).toEqual({ account: { id: w.accountId }, replyStopsCompany: false });
    expect((await adminCall(env, ['settings', 'get', '--account', w.accountId])).out).toMatchObject({
      leads: { replyStopsCompany: false },
    });
    expect((await adminCall(env, ['leads', 'reply-stops', '--account', w.accountId, '--company', 'maybe'])).error).toBe(
      '--company must be stop or continue',
    );
    const bob = await runningSequence(w, BOB, 'pricing');
    await say(w, `draft an email to ${JANE} about a quick idea for Acme`);
    const [card] = await waiting(w, 'mail_draft');
    await janeReplies(w, await send(w, card!.id, JANE));
    expect((await leads(w, 'replied')).length).toBe(1);
    expect(await sequenceOf(w, bob.cardId)).toMatchObject({ status: 'active', stop_reason: null });
  });
});

describe('a running sequence', () => {
  it('shows dismiss and Running in GET /review/{id} until it stops', async ({ env, smtp, inbound }) => {
    const w = await world({ env, smtp, inbound });
    const bob = await runningSequence(w, BOB, 'a case study');
    const shown = async () => (await env.api().get(`/api/v1/review/${bob.cardId}`).set(auth(w.token))).body.item;
    expect(await shown()).toMatchObject({ status: 'sent', actions: ['dismiss'], primaryLabel: 'Running' });
    expect((await env.api().post(`/api/v1/review/${bob.cardId}/dismiss`).set(auth(w.token)).send({})).status).toBe(200);
    expect(await shown()).toMatchObject({ status: 'dismissed', actions: [], primaryLabel: 'Dismissed' });
  });

  it('a step job that fires early ships at its due time, not at the sweep', async ({ env, smtp, inbound }) => {
    const w = await world({ env, smtp, inbound });
    const bob = await runningSequence(w, BOB, 'a webinar');

    const seq = await sequenceOf(w, bob.cardId);
    const dueAt = Date.now() + 2_500;
    await sequenceDueAt(env, seq.id, dueAt);
    const mails = () => smtp.received.filter((m) => m.to.includes(BOB)).length;
    const before = mails();
    const job = await pendingJob(env.deps.queues.get('shipments')!, `sequence-step-${seq.id}-1`);
    expect(job).toBeTruthy();
    await job!.promote(); // it runs now, before the step is due
    // Within 15 s of its due time, so the sweep (MAIL_SWEEP_MS, a minute) played no part; not before it.
    await until(async () => (await row(env, 'mail_sequences', { id: seq.id })).next_step === 2 || null, 15_000);
    expect(Date.now()).toBeGreaterThanOrEqual(dueAt - 1_000);
    expect(mails()).toBe(before + 1);
  });
});
